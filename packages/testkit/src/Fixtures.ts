import { call } from "./Http.ts"
import type { Target } from "./TestServer.ts"

export interface Key {
  readonly id: string
  readonly apiKey: string
}

export interface AccountFixture {
  readonly accountId: string
  readonly ownerUserId: string
  /** The owner's full-access key. */
  readonly ownerKey: string
  /** One key per entry of `keys`, with the scopes asked for. */
  readonly keys: Record<string, Key>
}

const expectStatus = (what: string, status: number, expected: number, text: string) => {
  if (status !== expected) throw new Error(`${what}: expected ${expected}, got ${status}: ${text}`)
}

/**
 * Makes an account through the operator API, with one key per entry of `keys`
 * (name → scopes; an empty list is full access), all of the owner.
 */
export const makeAccount = async (
  target: Target,
  options: {
    readonly name?: string
    readonly plan?: "free" | "pro" | "scale"
    readonly keys?: Record<string, ReadonlyArray<string>>
  } = {}
): Promise<AccountFixture> => {
  const created = await call(target, "POST", "/admin/v1/accounts", {
    auth: target.adminToken,
    json: { name: options.name ?? "Test account", ...(options.plan === undefined ? {} : { plan_id: options.plan }) }
  })
  expectStatus("create account", created.status, 201, created.text)
  const keys: Record<string, Key> = {}
  for (const [name, scopes] of Object.entries(options.keys ?? {})) {
    keys[name] = await makeKey(target, created.body.account_id, { name, scopes })
  }
  return {
    accountId: created.body.account_id,
    ownerUserId: created.body.owner_user_id,
    ownerKey: created.body.api_key,
    keys
  }
}

export const makeKey = async (
  target: Target,
  accountId: string,
  options: { readonly name?: string; readonly scopes?: ReadonlyArray<string>; readonly userId?: string }
): Promise<Key> => {
  const reply = await call(target, "POST", `/admin/v1/accounts/${accountId}/keys`, {
    auth: target.adminToken,
    json: {
      ...(options.name === undefined ? {} : { name: options.name }),
      ...(options.scopes === undefined ? {} : { scopes: options.scopes }),
      ...(options.userId === undefined ? {} : { user_id: options.userId })
    }
  })
  expectStatus("create key", reply.status, 201, reply.text)
  return { id: reply.body.id, apiKey: reply.body.api_key }
}

export const makeUser = async (target: Target, accountId: string, role: "admin" | "member"): Promise<string> => {
  const reply = await call(target, "POST", `/admin/v1/accounts/${accountId}/users`, {
    auth: target.adminToken,
    json: { role }
  })
  expectStatus("create user", reply.status, 201, reply.text)
  return reply.body.user_id
}

const exchange = 200 + Math.floor(Math.random() * 800)
let phoneCounter = 0
/** A valid phone number, distinct for the first 10,000 calls in a process (San Francisco numbers). */
export const nextPhone = (): string => {
  phoneCounter = (phoneCounter + 1) % 10000
  return `+1415${exchange}${String(phoneCounter).padStart(4, "0")}`
}
