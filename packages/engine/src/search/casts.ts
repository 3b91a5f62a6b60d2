/**
 * Casts of API.md §9.3 (`{"_<cast>": v}`): `v` is converted to the cast's
 * type with @tessera/schema's `convertValue` first, then given to the field.
 * Numbers, booleans and text interconvert (true ↔ 1, false ↔ 0, any other
 * number → true; text by its characters); dates, times, timedeltas, UUIDs
 * and geo cast onto their own type or onto text (in their canonical stored
 * form, `2020-01-01T00:00:00`); anything else is a 400. A value the cast's
 * conversion rejects matches nothing, like any unconvertible value.
 *
 * Every `ScalarType` of the schema has its cast here; a type the schema
 * gains gets one line in CAST_TYPES and its family in `castFamily`.
 */
import { convertValue, isNumericType, type FieldSpec, type IndexValue, type ScalarType } from '@tessera/schema';
import { type CastName, type LeafValue, queryErrors } from '@tessera/search-model';

/** The type each cast converts to. */
const CAST_TYPES: Readonly<Record<CastName, ScalarType>> = {
  _integer: 'integer', _positive: 'positive', _float: 'floating', _boolean: 'boolean', _keyword: 'keyword',
  _term: 'keyword', _text: 'text', _string: 'text', _date: 'date', _datetime: 'datetime',
  _time: 'time', _timedelta: 'timedelta', _uuid: 'uuid',
};

/** What a cast may be applied to: the same family, number/boolean/text among themselves, the rest onto text. */
type CastFamily = 'number' | 'boolean' | 'text' | 'date' | 'time' | 'timedelta' | 'uuid' | 'geo' | 'other';

function castFamily(type: string): CastFamily {
  if (isNumericType(type as ScalarType)) return 'number';
  switch (type) {
    case 'boolean':
      return 'boolean';
    case 'text':
    case 'keyword':
      return 'text';
    case 'date':
    case 'datetime':
      return 'date';
    case 'time':
    case 'timedelta':
    case 'uuid':
    case 'geo':
      return type;
    default:
      return 'other';
  }
}

function interconverts(family: CastFamily): boolean {
  return family === 'number' || family === 'boolean' || family === 'text';
}

/** 400 when the cast cannot apply to the field's type. */
export function checkCast(cast: CastName, spec: Pick<FieldSpec, 'path' | 'type'>): void {
  const from = castFamily(CAST_TYPES[cast]);
  const to = castFamily(spec.type);
  if (from === to) return;
  if (interconverts(from) && interconverts(to)) return;
  if (to === 'text' && from !== 'other') return;
  throw queryErrors.invalidQuery(`Cast ${cast} does not apply to field '${spec.path}' of type ${spec.type}`);
}

/**
 * The value a cast leaf gives a field of type `target` (null: a global leaf,
 * the cast's own value), for the field's own conversion; undefined when `v`
 * does not convert to the cast's type.
 */
export function castFor(cast: CastName, inner: LeafValue, target: ScalarType | null): IndexValue | undefined {
  let raw: unknown;
  switch (inner.kind) {
    case 'scalar':
    case 'string':
      raw = inner.value;
      break;
    case 'date_parts':
      raw = { _datetime: inner.parts };
      break;
    default:
      return undefined;
  }
  let converted: ReturnType<typeof convertValue>;
  try {
    converted = convertValue(CAST_TYPES[cast], raw, '');
  } catch {
    return undefined;
  }
  const value = converted.index;
  if (target === null) return value;
  switch (castFamily(target)) {
    case 'text':
      if (typeof value !== 'number' && typeof value !== 'boolean') return value;
      // Numbers and booleans as written; dates and times in their canonical form.
      return castFamily(CAST_TYPES[cast]) === 'number' || typeof value === 'boolean' || typeof converted.stored !== 'string'
        ? String(value) : converted.stored;
    case 'number':
      return typeof value === 'boolean' ? (value ? 1 : 0) : value;
    case 'boolean':
      return typeof value === 'number' ? value !== 0 : value;
    default:
      return value;
  }
}
