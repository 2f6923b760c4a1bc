export {
  BadRequestError,
  ConflictError,
  ForbiddenError,
  HttpError,
  type HttpResponse,
  json,
  NotFoundError,
  PayloadTooLargeError,
  ServiceUnavailableError,
  toErrorResponse,
  UnauthorizedError,
  UnsupportedMediaTypeError,
} from './errors.js';
