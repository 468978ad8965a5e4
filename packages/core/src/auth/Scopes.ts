import { Schema } from "effect"

/**
 * The scope policy of docs/contract.md: the 16 scopes, the permissions each grants,
 * and what a key with no scopes (full access) may do.
 */
export const SCOPES = [
  "leads:read",
  "leads:write",
  "conversations:read",
  "messages:send",
  "campaigns:read",
  "campaigns:write",
  "campaigns:send",
  "orders:read",
  "orders:write",
  "catalogue:read",
  "knowledge:read",
  "knowledge:write",
  "agents:read",
  "agents:write",
  "analytics:read",
  "ai:use"
] as const

export const Scope = Schema.Literals(SCOPES).annotate({ identifier: "Scope", description: "An API key scope" })
export type Scope = typeof Scope.Type

// Order matters: for a permission granted by several scopes, the first listed is
// the narrowest and is the one named in a 403.
const GRANTS: ReadonlyArray<readonly [Scope, ReadonlyArray<string>]> = [
  ["leads:read", ["leads.view"]],
  ["leads:write", ["leads.view", "leads.create", "leads.update", "leads.assign", "leads.delete"]],
  ["conversations:read", ["conversations.view", "messages.view"]],
  ["messages:send", ["conversations.view", "messages.view", "messages.send"]],
  ["campaigns:read", ["campaigns.view"]],
  ["campaigns:write", ["campaigns.view", "campaigns.create"]],
  ["campaigns:send", ["campaigns.view", "campaigns.send"]],
  ["orders:read", ["orders.view"]],
  ["orders:write", ["orders.view", "orders.create", "orders.update"]],
  ["catalogue:read", ["catalogue.view"]],
  ["knowledge:read", ["knowledge.view"]],
  ["knowledge:write", ["knowledge.view", "knowledge.upload", "knowledge.delete"]],
  ["agents:read", ["agents.view"]],
  ["agents:write", ["agents.view", "agents.create", "agents.update"]],
  ["analytics:read", ["analytics.view"]],
  ["ai:use", ["ai.use"]]
]

/** Permissions that no scope grants: only a full-access key has them. */
const FULL_ACCESS_ONLY = ["webhooks.manage", "catalogue.manage"] as const

export const FULL_ACCESS = "full access"

const byScope = new Map<Scope, ReadonlyArray<string>>(GRANTS)

const narrowestScope = new Map<string, Scope>()
for (const [scope, permissions] of GRANTS) {
  for (const permission of permissions) {
    if (!narrowestScope.has(permission)) narrowestScope.set(permission, scope)
  }
}

export const ALL_PERMISSIONS: ReadonlyArray<string> = [
  ...new Set([...GRANTS.flatMap(([, permissions]) => permissions), ...FULL_ACCESS_ONLY])
].sort()

export type Permission = (typeof GRANTS)[number][1][number] | (typeof FULL_ACCESS_ONLY)[number]

/** The effective permissions of a key, sorted; no scopes means every permission. */
export const permissionsOf = (scopes: ReadonlyArray<Scope>): ReadonlyArray<string> =>
  scopes.length === 0 ? ALL_PERMISSIONS : [...new Set(scopes.flatMap((scope) => byScope.get(scope) ?? []))].sort()

export const allows = (scopes: ReadonlyArray<Scope>, permission: string): boolean =>
  scopes.length === 0 || scopes.some((scope) => byScope.get(scope)?.includes(permission) === true)

/** What a 403 names for a permission: its narrowest scope, or "full access". */
export const requirementFor = (permission: string): string => narrowestScope.get(permission) ?? FULL_ACCESS

export const isScope = (value: string): value is Scope => byScope.has(value as Scope)

/** A key's scopes as given: known scopes, each once. */
export const ScopeList = Schema.Array(Scope).check(
  Schema.makeFilter((scopes) => new Set(scopes).size === scopes.length || "scopes must be distinct")
)
