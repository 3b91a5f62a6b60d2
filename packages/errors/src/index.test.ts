import { TesseraError, errorBody, toTesseraError } from './index.js';

describe('TesseraError', () => {
  it('round-trips through its plain form', () => {
    const e = new TesseraError('version_conflict', 409, 'Version mismatch!');
    const back = TesseraError.fromJSON(JSON.parse(JSON.stringify(e.toJSON())));
    expect(back).toBeInstanceOf(TesseraError);
    expect(back.toJSON()).toEqual({ code: 'version_conflict', status: 409, message: 'Version mismatch!' });
  });
  it('renders the API error body', () => {
    expect(errorBody(new TesseraError('version_conflict', 409, 'Version mismatch!')))
      .toEqual({ status: 409, type: 'Conflict', code: 'version_conflict', message: 'Conflict: Version mismatch!' });
  });
  it('hides unknown errors behind a 500', () => {
    const e = toTesseraError(new Error('secret path /etc'));
    expect(e.status).toBe(500);
    expect(e.message).not.toContain('/etc');
  });
});
