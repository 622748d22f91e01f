/**
 * Request validation with the TypeBox compiler (the route schemas are TypeBox schemas, so no second
 * JSON-schema engine is needed). Bodies are checked strictly: no type coercion, no removal of unknown
 * fields (schemas set additionalProperties:false, so an unknown field is a 400). Query strings and path
 * parameters arrive as text, so they are converted to the schema's types first.
 */
import type { FastifyInstance } from 'fastify';
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import { Value } from '@sinclair/typebox/value';
import { ValueErrorType, type ValueError } from '@sinclair/typebox/errors';

export class RequestValidationError extends Error {
  readonly statusCode = 400;
  readonly code = 'FST_ERR_VALIDATION';
  readonly validation = true;
}

function where(part: string, path: string): string {
  return path === '' ? part : `${part}${path.replace(/\//g, '.')}`;
}

/** Messages clients can act on: name the field and what was wrong with it. */
export function describe(part: string, e: ValueError): string {
  const at = where(part, e.path);
  const s = e.schema as { enum?: unknown[]; pattern?: string; minimum?: number; maximum?: number; minItems?: number; maxItems?: number };
  switch (e.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return `${at}: missing required field`;
    case ValueErrorType.ObjectAdditionalProperties:
      return `${at}: unknown field`;
    case ValueErrorType.Kind:
      if (s.enum) return `${at}: must be one of ${s.enum.join(', ')}`;
      break;
    case ValueErrorType.StringPattern:
      return `${at}: invalid format`;
    case ValueErrorType.ArrayMinItems:
      return `${at}: must contain at least ${s.minItems} item(s)`;
    case ValueErrorType.ArrayMaxItems:
      return `${at}: must contain at most ${s.maxItems} item(s)`;
    case ValueErrorType.NumberMinimum:
    case ValueErrorType.IntegerMinimum:
      return `${at}: must be >= ${s.minimum}`;
    case ValueErrorType.NumberMaximum:
    case ValueErrorType.IntegerMaximum:
      return `${at}: must be <= ${s.maximum}`;
    default:
      break;
  }
  return `${at}: ${e.message.charAt(0).toLowerCase()}${e.message.slice(1)}`;
}

export function installValidation(app: FastifyInstance): void {
  app.setValidatorCompiler(({ schema, httpPart }) => {
    const tschema = schema as TSchema;
    const check = TypeCompiler.Compile(tschema);
    const part = httpPart ?? 'body';
    const convert = part !== 'body';
    return (data: unknown) => {
      let value = data;
      if (convert) value = Value.Convert(tschema, Value.Default(tschema, Value.Clone(data)));
      else if (value !== null && typeof value === 'object') value = Value.Default(tschema, value);
      if (check.Check(value)) return { value };
      const first = check.Errors(value).First();
      return { error: new RequestValidationError(first ? describe(part, first) : `${part}: invalid`) };
    };
  });
}
