/**
 * Stand-in for optional modules that are not installed (ws's native speed-ups `bufferutil` and
 * `utf-8-validate`, node-fetch's `encoding`) inside the release
 * bundle: their users load them inside try/catch and do without them when loading throws, which
 * this does. Marking them external instead would make the single executable's `require` look
 * for them on disk and print a warning at every start.
 */
throw new Error('this optional module is not part of the release artifact');
