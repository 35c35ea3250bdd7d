import { DrydockError } from '@drydock/core';

export class AuthError extends DrydockError {
  static missing() {
    return new AuthError('UNAUTHORIZED', 'Send an API key as "Authorization: Bearer <key>".', 401);
  }
  static invalid() {
    return new AuthError('INVALID_API_KEY', 'The API key is not valid or has been revoked.', 401);
  }
  static suspended() {
    return new AuthError('TENANT_SUSPENDED', 'This tenant is suspended; its operator can resume it.', 403);
  }
  static invalidAdmin() {
    return new AuthError('INVALID_ADMIN_KEY', 'The admin key is not valid.', 401);
  }
}
