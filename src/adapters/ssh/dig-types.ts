/** An SOA record's fields, as dig prints them and node's resolveSoa returns them. */
export interface SoaRecord {
  mname: string;
  rname: string;
  serial: number;
  refresh: number;
  retry: number;
  expire: number;
  minimum: number;
}

/** What one SOA query to a resolver showed, however it was made. */
export type ResolverObservation =
  | {
      outcome: 'reply';
      /** The header's RCODE name: NOERROR, SERVFAIL, NXDOMAIN, REFUSED, ... */
      status: string;
      /** The line that shows the status, exactly as the probe printed it. */
      statusLine: string;
      /** The zone's SOA from the answer section, if there was one. */
      soa: SoaRecord | null;
      flags?: string[];
      /** The owner of an SOA that came back for another zone than the one asked about. */
      otherSoaOwner?: string;
    }
  | { outcome: 'no-reply'; detail: string }
  | { outcome: 'failed'; reason: string; fix?: string };
