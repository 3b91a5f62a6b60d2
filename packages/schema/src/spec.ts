/**
 * Resolution of a field's effective options: what descendants inherit
 * (`_index`, `_store`, `_strict`, `_dynamic`, detection flags, and the prefix
 * children extend), and the resolved `FieldSpec` that indexing and querying
 * use, with every default filled in.
 */
import { DEFAULT_DETECTION, DETECTION_FLAG_OPTIONS, type DetectionFlags } from './detect.js';
import { DEFAULT_GEO_ACCURACY } from './geo.js';
import {
  DATE_UNIT_SECONDS, DEFAULT_DATE_ACCURACY, DEFAULT_INDEX, DEFAULT_NUMERIC_ACCURACY, DEFAULT_TIME_ACCURACY, type DateUnit,
  type FieldType, type IndexMode, isDateType, isNumericType, isTimeType, parseIndex, type ScalarType, TYPE_CHARS,
} from './types.js';
import { xxh32 } from './xxh32.js';

/** Options a node passes down to its descendants. */
export interface Inherited {
  readonly index: IndexMode;
  /** False below `_store: false`: cannot be undone further down. */
  readonly store: boolean;
  readonly strict: boolean;
  readonly dynamic: boolean;
  readonly detection: DetectionFlags;
  /** This node's term prefix (`''` at the root); a child's default is this + name + `.`. */
  readonly prefix: string;
  /** This node's field path as indexed (`<uuid_field>` in place of a UUID under `_index_uuid_field: uuid_field`). */
  readonly path: string;
  /** `_index_uuid_field` for UUID-named children (§8.7). */
  readonly uuidField: UuidFieldMode;
  /**
   * Further names this node is indexed under (`_index_uuid_field: both`: the
   * `<uuid_field>` form beside the UUID one), each a path and a prefix that
   * descendants extend as they extend the node's own.
   */
  readonly aliases: readonly FieldAlias[];
}

export type UuidFieldMode = 'uuid' | 'uuid_field' | 'both';

export interface FieldAlias {
  readonly path: string;
  readonly prefix: string;
}

/** Schema name shared by UUID-named children (API.md §8.7), as Xapiand names it. */
export const UUID_FIELD_NAME = '<uuid_field>';

export function rootInherited(options: Readonly<Record<string, unknown>>, strict = false): Inherited {
  const base: Inherited = {
    index: DEFAULT_INDEX, store: true, strict, dynamic: true, detection: DEFAULT_DETECTION, prefix: '', path: '',
    uuidField: 'uuid', aliases: [],
  };
  return applyOptions(base, options, '', '', []);
}

const join = (path: string, name: string) => (path === '' ? name : `${path}.${name}`);

/** What a child named `name` with (normalised) `options` inherits and passes on. */
export function inheritChild(parent: Inherited, name: string, options: Readonly<Record<string, unknown>>): Inherited {
  const own = typeof options._prefix === 'string' ? options._prefix : undefined;
  const aliases = parent.aliases.length === 0 ? parent.aliases
    : parent.aliases.map((a) => ({ path: join(a.path, name), prefix: own ?? `${a.prefix}${name}.` }));
  return applyOptions(parent, options, own ?? `${parent.prefix}${name}.`, join(parent.path, name), aliases);
}

/**
 * What a UUID-named child inherits (API.md §8.7): under `uuid` it is named by
 * its UUID, under `uuid_field` by `<uuid_field>`, under `both` by the UUID
 * with `<uuid_field>` as an alias.
 */
export function inheritUuidChild(parent: Inherited, uuid: string, options: Readonly<Record<string, unknown>>): Inherited {
  if (parent.uuidField === 'uuid_field') return inheritChild(parent, UUID_FIELD_NAME, options);
  const child = inheritChild(parent, uuid, options);
  if (parent.uuidField === 'uuid' || typeof options._prefix === 'string') return child;
  const shared = inheritChild(parent, UUID_FIELD_NAME, options);
  return { ...child, aliases: [...child.aliases, { path: shared.path, prefix: shared.prefix }, ...shared.aliases] };
}

function applyOptions(
  parent: Inherited, options: Readonly<Record<string, unknown>>, prefix: string, path: string, aliases: readonly FieldAlias[],
): Inherited {
  let detection = parent.detection;
  for (const [flag, key] of Object.entries(DETECTION_FLAG_OPTIONS) as Array<[keyof DetectionFlags, string]>) {
    const v = options[key];
    if (typeof v === 'boolean' && v !== detection[flag]) detection = { ...detection, [flag]: v };
  }
  return {
    index: (options._index === undefined ? undefined : parseIndex(options._index)) ?? parent.index,
    store: parent.store && options._store !== false,
    strict: typeof options._strict === 'boolean' ? options._strict : parent.strict,
    dynamic: typeof options._dynamic === 'boolean' ? options._dynamic : parent.dynamic,
    detection,
    prefix,
    path,
    uuidField: (options._index_uuid_field as UuidFieldMode | undefined) ?? parent.uuidField,
    aliases,
  };
}

/** Default value slot (API.md §5.8): xxh32 of `"<path>."` seeded with the type char, moved above the reserved 0–19. */
export function defaultSlot(path: string, typeChar: string): number {
  const h = xxh32(`${path}.`, typeChar.charCodeAt(0));
  return h < 20 ? h + 20 : h;
}

export function defaultAccuracy(type: FieldType['base']): readonly number[] | readonly DateUnit[] {
  if (isNumericType(type)) return DEFAULT_NUMERIC_ACCURACY;
  if (isDateType(type)) return DEFAULT_DATE_ACCURACY;
  if (isTimeType(type)) return DEFAULT_TIME_ACCURACY;
  if (type === 'geo') return DEFAULT_GEO_ACCURACY;
  return [];
}

/**
 * Accuracy as terms use it: numeric steps, date units; a time's units become
 * their seconds, since times are plain numbers of seconds (`minute` → 60,
 * named `<3c>.` as a date's minute would be).
 */
function specAccuracy(type: ScalarType, accuracy: readonly number[] | readonly DateUnit[]): readonly number[] | readonly DateUnit[] {
  if (!isTimeType(type)) return accuracy;
  return (accuracy as ReadonlyArray<number | DateUnit>).map((u) => (typeof u === 'number' ? u : DATE_UNIT_SECONDS[u]));
}

export type StemStrategy = 'stem_none' | 'stem_some' | 'stem_all' | 'stem_all_z';
export type StopStrategy = 'stop_none' | 'stop_all' | 'stop_stemmed';

/** Everything indexing and querying need to know about one field, defaults resolved. */
export interface FieldSpec {
  readonly path: string;
  readonly type: ScalarType;
  /** Declared or detected as `array/<type>` (values of either shape are accepted). */
  readonly array: boolean;
  readonly typeChar: string;
  readonly index: IndexMode;
  readonly prefix: string;
  readonly slot: number;
  /** Numeric steps, or date unit names; empty for types without accuracy. */
  readonly accuracy: readonly number[] | readonly DateUnit[];
  readonly language?: string;
  readonly stemLanguage?: string;
  readonly stemStrategy: StemStrategy;
  readonly stopStrategy: StopStrategy;
  readonly positions: boolean;
  readonly ngram: boolean;
  readonly cjkNgram: boolean;
  readonly cjkWords: boolean;
  readonly spelling: boolean;
  readonly boolTerm: boolean;
  readonly weight: number;
  readonly position: number;
}

/** The spec of a field of scalar type `type` whose node options are `options` and whose inherited context is `inh`. */
export function resolveSpec(
  path: string, type: ScalarType, array: boolean, options: Readonly<Record<string, unknown>>, inh: Inherited,
): FieldSpec {
  const typeChar = TYPE_CHARS[type];
  // A script field is indexed and searched as the text of its body (ctype S, API.md §8.1).
  if (type === 'script') type = 'text';
  const language = typeof options._language === 'string' ? options._language : undefined;
  const stemLanguage = typeof options._stem_language === 'string' ? options._stem_language : language;
  const spec: FieldSpec = {
    path,
    type,
    array,
    typeChar,
    index: inh.index,
    prefix: inh.prefix,
    slot: typeof options._slot === 'number' ? options._slot : defaultSlot(path, typeChar),
    accuracy: specAccuracy(type, Array.isArray(options._accuracy) ? (options._accuracy as number[] | DateUnit[]) : defaultAccuracy(type)),
    stemStrategy: (options._stem_strategy as StemStrategy | undefined) ?? 'stem_some',
    stopStrategy: (options._stop_strategy as StopStrategy | undefined) ?? 'stop_stemmed',
    positions: options._positions !== false,
    ngram: options._ngram === true,
    cjkNgram: options._cjk_ngram === true,
    cjkWords: options._cjk_words === true,
    spelling: options._spelling === true,
    boolTerm: options._bool_term === true,
    weight: typeof options._weight === 'number' ? options._weight : 1,
    position: typeof options._position === 'number' ? options._position : 0,
  };
  if (language === undefined && stemLanguage === undefined) return spec;
  return { ...spec, ...(language === undefined ? {} : { language }), ...(stemLanguage === undefined ? {} : { stemLanguage }) };
}

/**
 * The value an immutable option has on an existing, typed field, whether set
 * or defaulted: what a new `_schema` or an inline option must equal.
 */
export function effectiveImmutable(
  options: Readonly<Record<string, unknown>>, key: string, type: FieldType, path: string, prefix: string,
): unknown {
  if (options[key] !== undefined) return options[key];
  const scalar = type.base === 'object' ? undefined : type.base;
  switch (key) {
    case '_prefix': return prefix;
    case '_slot': return scalar === undefined ? undefined : defaultSlot(path, TYPE_CHARS[scalar]);
    case '_accuracy': return scalar === undefined ? undefined : defaultAccuracy(scalar);
    case '_stem_language': return options._language;
    case '_namespace': return false;
    case '_partial_paths': return true;
    case '_index_uuid_field': return 'uuid';
    default: return undefined;
  }
}
