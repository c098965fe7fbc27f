/**
 * The `scan` job (queue maas-scan): one registered check for one target, then its drift alerts.
 * Every worker runs it through src/edge/alerts/start-alerting.ts; the logic is src/edge/alerts/scan-job.ts.
 */
export { createScanJob, SCAN_JOB, type ScanData, type ScanDependencies } from '../src/edge/alerts/scan-job.ts';
