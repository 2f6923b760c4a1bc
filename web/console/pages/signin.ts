import { h } from '../../shared/dom.js';
import { ApiError, api } from '../api.js';
import { forgetApps } from '../context.js';
import { signIn } from '../session.js';

/**
 * The sign-in form: one field, labelled "API key". The key is checked with GET /v1/apps before it is kept, and
 * kept in this tab only. The form never submits (the CSP's form-action is 'none'), so the key never lands in a URL.
 */
export function renderSignIn(onSignedIn: () => void): HTMLElement {
  const input = h('input', {
    id: 'api-key',
    name: 'api-key',
    type: 'password',
    autocomplete: 'off',
    spellcheck: 'false',
    required: true,
    'aria-describedby': 'api-key-help',
  });
  const message = h('p', { class: 'form-error', role: 'alert', 'data-testid': 'sign-in-error' });
  const submit = h('button', { type: 'submit' }, 'Sign in');
  const form = h(
    'form',
    { class: 'sign-in', 'aria-labelledby': 'sign-in-title' },
    h('h1', { id: 'sign-in-title' }, 'Sign in to the console'),
    h('label', { for: 'api-key' }, 'API key'),
    input,
    h(
      'p',
      { id: 'api-key-help', class: 'muted' },
      'A gateway API key (wgw_…). It is kept in this browser tab only and sent to this gateway as the bearer ' +
        'token; closing the tab or signing out forgets it. Locally, npm start prints a dev key.',
    ),
    submit,
    message,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const key = input.value.trim();
    if (!key) {
      message.textContent = 'Enter an API key.';
      return;
    }
    submit.disabled = true;
    message.textContent = '';
    try {
      await api('/v1/apps', { key });
      signIn(key);
      forgetApps();
      input.value = '';
      onSignedIn();
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) {
        message.textContent = 'That key was not accepted. Check it and try again.';
      } else if (err instanceof ApiError && err.status === 403) {
        // A key without messages:read may still redrive (admin); let it in, pages say what it lacks.
        signIn(key);
        forgetApps();
        onSignedIn();
      } else {
        message.textContent = err instanceof Error ? err.message : String(err);
      }
    } finally {
      submit.disabled = false;
    }
  });
  queueMicrotask(() => input.focus());
  return h('div', { class: 'center' }, form);
}
