export {
  ACCESS_TOKEN_PREFIX,
  grants,
  isAdministrator,
  ISSUABLE_SCOPES,
  newAccessTokenSecret,
  NOT_ISSUABLE,
  Scope,
} from './scopes.js';
export type { Principal } from './scopes.js';
