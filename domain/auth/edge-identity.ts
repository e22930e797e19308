/**
 * Edge access identity as the edge (api/) sees it: the headers an edge access layer puts its
 * assertion in, and the identity a valid assertion names. platform/edge verifies assertions.
 */

/** Request headers an edge access assertion may arrive in (the first present is used). */
export const EDGE_ASSERTION_HEADERS = ['edge-access-jwt-assertion', 'cf-access-jwt-assertion'] as const;

/** A validated identity. */
export interface EdgeIdentity {
  readonly subject: string;
  readonly email: string | undefined;
}
