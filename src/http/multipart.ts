/**
 * `multipart/form-data` uploads (docs/api.md "Infractions": a defense and its files), read with
 * formidable after the route has authenticated the caller and found the resource, never before:
 * the app's JSON body parser leaves these bodies unread (src/http/middleware/body.ts). Files are
 * kept in memory, within the limits given, and never written to disk, so a refused upload leaves
 * nothing behind. Every refusal is an AppError: 413 over the total, 400 for too many files, an
 * empty file, oversized fields or a malformed body.
 */
import { Writable } from 'node:stream';
import formidable, { errors as formidableErrors } from 'formidable';
import { AppError, tooLarge, validationError } from '../lib/errors';
import type { AppContext } from './types';

export interface UploadedFile {
  /** The form field it came in. */
  field: string;
  /** The name the client gave it (unchecked). */
  name: string | null;
  content: Buffer;
}

export interface MultipartForm {
  fields: Record<string, string[]>;
  files: UploadedFile[];
}

export interface MultipartLimits {
  maxFiles: number;
  /** All files together, in bytes. */
  maxTotalFileBytes: number;
  /** All text fields together, in bytes. */
  maxFieldBytes: number;
  /** Named in the 400 for too many files (`param`). */
  filesParam: string;
}

/** Room for the parts' headers and boundaries beside the files and fields. */
const ENVELOPE_BYTES = 64 * 1024;

export async function readMultipart(ctx: AppContext, limits: MultipartLimits): Promise<MultipartForm> {
  if (!ctx.is('multipart/form-data')) throw validationError('The body must be multipart/form-data', 'content-type');
  const encoding = ctx.get('content-encoding').toLowerCase();
  if (encoding !== '' && encoding !== 'identity')
    throw new AppError('unsupported_content_encoding', 'A multipart upload is not taken with a Content-Encoding');
  const declared = Number(ctx.get('content-length') || 0);
  if (declared > limits.maxTotalFileBytes + limits.maxFieldBytes + ENVELOPE_BYTES)
    throw tooLarge(`The files may be ${limits.maxTotalFileBytes} bytes in all`, limits.filesParam);

  const chunks = new WeakMap<object, Buffer[]>();
  const form = formidable({
    maxFiles: limits.maxFiles,
    maxFileSize: limits.maxTotalFileBytes,
    maxTotalFileSize: limits.maxTotalFileBytes,
    maxFieldsSize: limits.maxFieldBytes,
    maxFields: 20,
    allowEmptyFiles: false,
    minFileSize: 1,
    fileWriteStreamHandler: (file) => {
      const parts: Buffer[] = [];
      if (file) chunks.set(file, parts);
      return new Writable({
        write(chunk: Buffer, _enc, done) {
          parts.push(chunk);
          done();
        },
      });
    },
  });
  try {
    const [fields, files] = await form.parse(ctx.req);
    const uploaded: UploadedFile[] = [];
    for (const [field, list] of Object.entries(files)) {
      for (const f of list ?? []) {
        uploaded.push({ field, name: f.originalFilename, content: Buffer.concat(chunks.get(f) ?? []) });
      }
    }
    const textFields: Record<string, string[]> = {};
    for (const [name, values] of Object.entries(fields)) textFields[name] = values ?? [];
    return { fields: textFields, files: uploaded };
  } catch (err) {
    throw refusal(err, limits);
  }
}

/** A formidable failure as the client's error (formidable raises plain errors with its own codes). */
function refusal(err: unknown, limits: MultipartLimits): AppError {
  const code = (err as { code?: unknown } | null)?.code;
  switch (code) {
    case formidableErrors.biggerThanTotalMaxFileSize:
    case formidableErrors.biggerThanMaxFileSize:
      return tooLarge(`The files may be ${limits.maxTotalFileBytes} bytes in all`, limits.filesParam);
    case formidableErrors.maxFilesExceeded:
      return validationError(`${limits.filesParam} must have at most ${limits.maxFiles} items`, limits.filesParam);
    case formidableErrors.noEmptyFiles:
    case formidableErrors.smallerThanMinFileSize:
      return validationError(`${limits.filesParam} must not hold an empty file`, limits.filesParam);
    case formidableErrors.maxFieldsSizeExceeded:
    case formidableErrors.maxFieldsExceeded:
      return validationError('The text fields are too large');
    case formidableErrors.aborted:
      return new AppError('malformed_body', 'Request aborted');
    default:
      return new AppError('malformed_body', 'Malformed multipart/form-data body');
  }
}
