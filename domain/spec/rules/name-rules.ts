/**
 * Name rules of the spec: what makes a database name, bucket name, node pool name, scheduler variable key
 * or variable file name acceptable. Each check answers undefined for a good name, or says what is wrong.
 * The same rules appear as patterns in schemas/infraspec.schema.json for editors.
 */

const portableIdentifier = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const dnsLabel = /^[a-z0-9]([a-z0-9-]*[a-z0-9])?$/;
const uppercaseVariable = /^[A-Z][A-Z0-9_]*$/;
const ipv4Like = /^\d{1,3}(\.\d{1,3}){3}$/;

/** Checks a PostgreSQL database name: a 1-63 character portable identifier. */
export function postgresDatabaseNameProblem(name: string): string | undefined {
  if (portableIdentifier.test(name)) return undefined;
  if (name.length === 0) return 'is empty; a database name is a 1-63 character portable identifier';
  if (name.length > 63)
    return `${JSON.stringify(name)} is longer than 63 characters; a database name is a 1-63 character portable identifier`;
  if (/^[0-9]/.test(name))
    return `${JSON.stringify(name)} starts with a digit; a database name is a portable identifier (letters, digits and "_", not starting with a digit)`;
  return `${JSON.stringify(name)} is not a portable identifier: use only letters, digits and "_", not starting with a digit`;
}

/** Checks an object storage bucket name: DNS-compatible, 3-63 characters. */
export function bucketNameProblem(name: string): string | undefined {
  const rule =
    'bucket names are 3-63 lowercase letters, digits, "-" and ".", starting and ending with a letter or digit';
  if (name.length < 3 || name.length > 63) return `${JSON.stringify(name)} has ${name.length} characters; ${rule}`;
  if (/[^a-z0-9.-]/.test(name)) return `${JSON.stringify(name)} is not DNS-compatible; ${rule}`;
  if (!/^[a-z0-9]/.test(name) || !/[a-z0-9]$/.test(name))
    return `${JSON.stringify(name)} must start and end with a letter or digit; ${rule}`;
  if (name.includes('..')) return `${JSON.stringify(name)} contains ".."; ${rule}`;
  if (ipv4Like.test(name)) return `${JSON.stringify(name)} looks like an IP address; bucket names must be DNS names`;
  return undefined;
}

/** Checks a DNS label (node pool names): 1-63 lowercase letters, digits and "-", alphanumeric at both ends. */
export function dnsLabelProblem(name: string): string | undefined {
  if (name.length >= 1 && name.length <= 63 && dnsLabel.test(name)) return undefined;
  return `${JSON.stringify(name)} is not DNS-compatible: use 1-63 lowercase letters, digits and "-", starting and ending with a letter or digit`;
}

/** Checks a scheduler variable key: an uppercase variable name. */
export function variableKeyProblem(key: string): string | undefined {
  if (uppercaseVariable.test(key)) return undefined;
  return `${JSON.stringify(key)} is not an uppercase variable name (A-Z, digits and "_", starting with a letter), for example DATABASE_PASSWORD`;
}

/** Checks a variable file destination: exactly one safe filename (no directory, no traversal, not absolute). */
export function safeFilenameProblem(name: string): string | undefined {
  const shown = JSON.stringify(name);
  if (name.length === 0) return 'is empty; give one filename such as db-password';
  if (name.includes('\u0000')) return `${shown} contains a NUL character; give exactly one safe filename`;
  if (name.startsWith('/'))
    return `${shown} is an absolute path; give exactly one filename, it is written under secrets/`;
  if (name.includes('/') || name.includes('\\'))
    return `${shown} contains a path separator; give exactly one filename, it is written under secrets/`;
  if (name === '.' || name === '..') return `${shown} is not a filename; give exactly one safe filename`;
  if (name.length > 255) return `${shown} is longer than 255 characters`;
  return undefined;
}

/**
 * Why a volume name cannot name the app's volume folder (1-64 letters, digits, `.`, `_`, `-`,
 * starting with a letter or digit: never a path), or undefined.
 */
export function volumeNameProblem(name: string): string | undefined {
  const shown = JSON.stringify(name);
  if (name.includes('/') || name.includes('\\'))
    return `${shown} contains a path separator; a volume is named, not a path (it names the app's volume folder)`;
  if (name === '.' || name === '..') return `${shown} is not a name; give a name such as uploads`;
  if (!/^[a-zA-Z0-9][a-zA-Z0-9._-]{0,63}$/.test(name))
    return `${shown} must be 1-64 letters, digits, ".", "_" or "-" starting with a letter or digit`;
  return undefined;
}

/** Folders of the host's kernel interfaces a volume must never cover. */
const KERNEL_FOLDERS = ['/proc', '/sys', '/dev'];

/**
 * Why a volume mount path could reach outside its place (a `.` or `..` segment, an empty one, the
 * root itself, or a kernel folder), or undefined. The schema requires it to be absolute.
 */
export function volumeMountProblem(mount: string): string | undefined {
  if (!mount.startsWith('/')) return undefined;
  const shown = JSON.stringify(mount);
  const segments = mount.slice(1).split('/');
  if (segments.some((s) => s === '..'))
    return `${shown} contains "..", which escapes the mount path; write the folder without it`;
  if (
    segments.some((s) => s === '.') ||
    (mount.length > 1 && segments.some((s, i) => s === '' && i < segments.length - 1))
  )
    return `${shown} is not a normalized path (no "." or empty segments)`;
  if (mount === '/' || segments.every((s) => s === ''))
    return `${shown} would cover the whole file system; mount a folder`;
  const kernel = KERNEL_FOLDERS.find((k) => mount === k || mount.startsWith(`${k}/`));
  if (kernel !== undefined) return `${shown} lies in ${kernel}, the kernel's interface; mount elsewhere`;
  return undefined;
}
