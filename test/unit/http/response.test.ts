import { describe, expect, it } from 'vitest';
import {
  InvalidJsonError,
  PayloadTooLargeError,
  RouteNotFoundError,
  toErrorBody,
  toErrorResponse,
  UnsupportedMediaTypeError,
} from '#lib/http/index.js';
import {
  AccessDeniedError,
  InvalidRequestError,
  MessageNotFoundError,
  RetryLaterError,
  StateConflictError,
  UnauthenticatedError,
} from '#lib/ingest/index.js';
import { QueueUnavailableError } from '#lib/queue/index.js';
import { StoreUnavailableError } from '#lib/store/index.js';

const respond = (err: unknown) => {
  const res = toErrorResponse(err);
  return { status: res.statusCode, headers: res.headers, body: JSON.parse(res.body) };
};

describe('toErrorResponse', () => {
  it.each([
    [
      new InvalidRequestError('invalid_message', 'the message is invalid', [
        { field: 'app', message: 'required' },
      ]),
      400,
    ],
    [new InvalidRequestError('invalid_idempotency_key', 'bad key'), 400],
    [new InvalidRequestError('idempotency_not_supported', 'no keys on batches'), 400],
    [new InvalidRequestError('invalid_request', 'body must be {"messages": [...]}'), 400],
    [new InvalidJsonError('request body is not valid JSON'), 400],
    [new UnauthenticatedError(), 401],
    [new AccessDeniedError('API key ops-key may not send for app billing'), 403],
    [new MessageNotFoundError('no message msg_1'), 404],
    [new RouteNotFoundError('GET /v2/x'), 404],
    [new StateConflictError('idempotency_conflict', 'used with another body'), 409],
    [new StateConflictError('not_recallable', 'only sent messages'), 409],
    [new StateConflictError('recall_window_passed', 'too late'), 409],
    [new StateConflictError('app_not_configured', 'gone'), 409],
    [new StateConflictError('wecom_recall_failed', 'refused'), 409],
    [new StateConflictError('wecom_ip_not_trusted', '60020'), 409],
    [new PayloadTooLargeError(1024), 413],
    [new UnsupportedMediaTypeError(), 415],
    [new RetryLaterError('could not queue the message; retry'), 503],
  ])('answers %s with %i and its own code, message and details', (err, status) => {
    const res = respond(err);

    expect(res.status).toBe(status);
    expect(res.body).toEqual({ error: { code: err.code, message: err.message, details: err.details } });
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
  });

  it('names the auth scheme on a 401 and invites an immediate retry on a 503', () => {
    expect(respond(new UnauthenticatedError()).headers['www-authenticate']).toBe('Bearer');
    expect(respond(new RetryLaterError('retry')).headers['retry-after']).toBe('1');
    expect(respond(new StateConflictError('not_recallable', 'x')).headers).not.toHaveProperty('retry-after');
  });

  it('answers an unavailable DynamoDB or SQS with a 503 that names neither and says nothing changed', () => {
    for (const err of [
      new StoreUnavailableError({ cause: new Error('ECONNREFUSED 127.0.0.1:8000') }),
      new QueueUnavailableError({ cause: new Error('ThrottlingException') }),
    ]) {
      const res = respond(err);
      expect(res.status).toBe(503);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.body.error).toEqual({
        code: 'unavailable',
        message: 'a storage or queue service is unavailable right now; nothing was changed, retry',
        details: [],
      });
    }
  });

  it('answers anything else with a bare 500 that leaks nothing', () => {
    const secret = Object.assign(new Error('table wecom-gateway: bad expression near :token'), { code: 'x' });
    for (const err of [secret, 'thrown string', undefined]) {
      const res = respond(err);
      expect(res.status).toBe(500);
      expect(res.body).toEqual({ error: { code: 'internal_error', message: 'internal error', details: [] } });
    }
  });
});

describe('toErrorBody', () => {
  it('is the error object of the response, for one item of a batch', () => {
    const err = new InvalidRequestError('invalid_message', 'the message is invalid', [
      { field: 'touser', message: 'required' },
    ]);
    expect(toErrorBody(err)).toEqual(respond(err).body.error);
    expect(toErrorBody(new Error('bug'))).toEqual({
      code: 'internal_error',
      message: 'internal error',
      details: [],
    });
  });
});
