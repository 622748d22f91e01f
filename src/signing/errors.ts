/** Raised when a typed-data message cannot be encoded (missing field, value out of range, bad address). */
export class Eip712EncodingError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
    this.name = 'Eip712EncodingError';
  }
}
