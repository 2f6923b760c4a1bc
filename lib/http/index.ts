export {
  HttpError,
  type HttpErrorCode,
  InvalidJsonError,
  PayloadTooLargeError,
  RouteNotFoundError,
  UnsupportedMediaTypeError,
} from './errors.js';
export {
  type ErrorBody,
  type HttpResponse,
  isServiceUnavailable,
  json,
  toErrorBody,
  toErrorResponse,
} from './response.js';
