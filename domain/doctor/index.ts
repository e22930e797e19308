/**
 * Host checks of `svc doctor`.
 */
export {
  DoctorStatus,
  doctorCheck,
  doctorReport,
  versionAtLeast,
  type DoctorCheck,
  type DoctorReport,
} from './doctor-check.js';
