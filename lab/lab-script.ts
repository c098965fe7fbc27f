import { controllerWipesRecord, opentofuReplacesVm } from './lab-incidents.ts';
import type { LabWebhook } from './alertmanager-webhook.ts';
import { LAB_USERS, PROD_API, type LabWorld } from './lab-world.ts';

export type LabUser = keyof typeof LAB_USERS;

/** One line of the demo: somebody types a /maas command and the bot answers (and may post a report). */
export interface LabCommandStep {
  kind: 'command';
  user: LabUser;
  text: string;
  /**
   * `answer`: the immediate reply is enough; `report`: wait for the worker's posted result too;
   * `alert`: wait for the alert channel to change (a post, an update or a thread line).
   */
  expect: 'answer' | 'report' | 'alert';
  note?: string;
}

/** A button click on the newest bot message that carries it. */
export interface LabClickStep {
  kind: 'click';
  user: LabUser;
  /** The button's text starts with this (e.g. `Approve`). */
  button: string;
  /** Wait for this many new bot messages (thread replies, outcomes) after the click. */
  expectMessages: number;
  note?: string;
}

/** Something happens in the world, no command typed: the bot has to notice it and alert by itself. */
export interface LabWorldStep {
  kind: 'world';
  happen: (world: LabWorld) => void;
  /** Printed with how long the alert channel took to change, e.g. "prod's wipe alerted". */
  measured: string;
  note?: string;
}

/** The lab plays Alertmanager: one webhook POSTed to the bot's /alertmanager; the alert channel must answer. */
export interface LabAlertmanagerStep {
  kind: 'alertmanager';
  webhook: LabWebhook;
  note?: string;
}

export type LabStep = LabCommandStep | LabClickStep | LabWorldStep | LabAlertmanagerStep;

/** Alertmanager's KubeAPIDown for prod, grouped by alertname (its route's group_by). */
const KUBE_API_DOWN = {
  groupKey: '{}:{alertname="KubeAPIDown"}',
  groupLabels: { alertname: 'KubeAPIDown' },
  alerts: [{ labels: { alertname: 'KubeAPIDown', cluster: 'prod', severity: 'critical' }, fingerprint: '5c1e6f0a2b7d9e31', summary: 'The API server of prod does not answer' }],
};

/** The scripted conversation, in order. Later work appends its commands here. */
export const labScript: LabStep[] = [
  { kind: 'command', user: 'operator', text: 'help', expect: 'answer', note: 'What can the bot do?' },
  { kind: 'command', user: 'operator', text: 'sites', expect: 'answer' },
  { kind: 'command', user: 'operator', text: 'dns-check prod', expect: 'report', note: "The wiped API-server record, and what clients still get from the rack's resolver" },
  { kind: 'command', user: 'operator', text: 'dns-check staging', expect: 'report' },
  { kind: 'command', user: 'operator', text: 'resolver-check site-b', expect: 'report', note: "The isolated rack, and the DHCP option 6 site-b's nodes are handed (read from the rack's dhcpd.conf)" },
  { kind: 'command', user: 'operator', text: 'resolver-check site-a', expect: 'report' },
  { kind: 'command', user: 'operator', text: 'mac-diff site-b', expect: 'report', note: "The isolated rack's regenerated MACs, with MAAS's witnesses (the rack saw the new MAC; no PXE event since)" },
  { kind: 'command', user: 'operator', text: 'mac-diff site-a', expect: 'report' },
  { kind: 'command', user: 'operator', text: 'resolver-check all', expect: 'report', note: "Every site at once: one summary, each failing site's details in its thread" },
  { kind: 'command', user: 'operator', text: 'mac-diff site-c', expect: 'report', note: 'An incident at scale: 300 drifted machines, the whole table and the pinned-MAC snippet as files in the thread' },
  { kind: 'command', user: 'operator', text: 'scan site-b', expect: 'alert', note: 'Drift alerts: a scan posts once to #alerts…' },
  { kind: 'command', user: 'operator', text: 'scan prod', expect: 'alert' },
  { kind: 'command', user: 'operator', text: 'scan site-b', expect: 'alert', note: '…and a second scan updates the same alert instead of posting again' },
  { kind: 'command', user: 'operator', text: 'fix-macs site-b', expect: 'report', note: 'The MAC repair is a plan, posted for approval' },
  { kind: 'click', user: 'operator', button: 'Approve', expectMessages: 1, note: "The requester's own click is refused (only the requester sees why)" },
  {
    kind: 'click',
    user: 'approver',
    button: 'Approve',
    expectMessages: 12,
    note: 'An approver approves: re-measured, then one machine at a time, every change read back; the Failed commissioning machine is re-commissioned (mark_broken → update → commission) and followed to Ready',
  },
  { kind: 'command', user: 'operator', text: 'mac-diff site-b', expect: 'report' },
  { kind: 'command', user: 'operator', text: 'fix-dns prod', expect: 'report', note: 'The DNS repair: the running control plane back on the record, the hash cache made consistent' },
  { kind: 'click', user: 'approver', button: 'Approve', expectMessages: 2 },
  { kind: 'command', user: 'operator', text: 'dns-check prod', expect: 'report' },
  { kind: 'command', user: 'operator', text: 'scan site-b', expect: 'alert', note: "The next scan marks site-b's MAC alert resolved; its resolver alert stays open until the resolver repair below (prod's resolved by itself: the watch saw fix-dns change the hash and re-checked)" },
  { kind: 'command', user: 'operator', text: 'fix-resolver site-b', expect: 'report', note: "The resolver repair: the rack's forwarder (installed by the configured command), then the subnet's DNS in MAAS" },
  { kind: 'click', user: 'approver', button: 'Approve', expectMessages: 7, note: "Approved: forwarder started and verified from the rack, subnet changed and read back, the rack's dhcpd.conf rewritten by MAAS (IP range re-saved), resolver-check run again, then the canary commissioned to Ready" },
  { kind: 'command', user: 'operator', text: 'resolver-check site-b', expect: 'report', note: 'Nodes at site-b now resolve through the forwarder, and DHCP option 6 hands them only the forwarder' },
  { kind: 'command', user: 'operator', text: 'timeline prod', expect: 'report', note: "The handover: prod's incident record (the alert, the checks, the plan, who approved, every write and its read-back), the whole of it as a Markdown file in the thread" },
  {
    kind: 'world',
    happen: (world) => controllerWipesRecord(world, 'prod', PROD_API.fqdn),
    measured: "prod's wipe alerted",
    note: "The wipe again, with nobody typing: prod's v4.9.1 controller empties the record and caches the empty-set hash; the watch sees the annotation change and dns-check alerts at once",
  },
  {
    kind: 'world',
    happen: (world) => opentofuReplacesVm(world, 'site-a-node2', '52:54:00:a7:5e:02'),
    measured: "site-a's replaced VM alerted",
    note: "The regenerated MACs again, with nobody typing: an OpenTofu replace undefines site-a-node2 and defines it with a new MAC; site-a's VM host watch (virsh event) sees it and mac-diff alerts at once",
  },
  {
    kind: 'alertmanager',
    webhook: { ...KUBE_API_DOWN, status: 'firing' },
    note: "Alertmanager's own alert: KubeAPIDown fires for prod (the lab POSTs Alertmanager's webhook, with its bearer token); the bot answers with prod's dns-check, no command typed",
  },
  {
    kind: 'alertmanager',
    webhook: { ...KUBE_API_DOWN, status: 'resolved' },
    note: 'Alertmanager resolves the same group: the bot says so where it answered',
  },
];
