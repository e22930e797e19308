/**
 * The region of a spec that declares none: the one local scheduler target.
 */

/** The region used when a spec declares none. */
export const LOCAL_REGION = 'local';
