import { expect } from "vitest"
import { call, type Reply } from "../Http.ts"
import { listAll, neverIssued } from "../internal/wire.ts"
import * as Resource from "../Resource.ts"
import type { Target } from "../TestServer.ts"

/** The fields of an API key's summary on the wire, in the order the server writes them. */
export const SUMMARY_FIELDS = ["id", "name", "user_id", "prefix", "scopes", "created_at", "revoked_at"]

/** A key as `/api/keys` lists it: never the key, nor its hash. */
export interface KeySummary {
  readonly id: string
  readonly name: string
  readonly user_id: string
  readonly prefix: string
  readonly scopes: ReadonlyArray<string>
  readonly created_at: string
  readonly revoked_at: string | null
}

/** The answer of `POST /api/keys`: the summary and the key, shown only there (null on a replay). */
export interface CreatedKey extends KeySummary {
  readonly api_key: string | null
}

/** POST /api/keys with the key; the reply, whatever it is. */
export const postKey = (target: Target, key: string, body: unknown = {}, headers?: Record<string, string>) =>
  call(target, "POST", "/api/keys", { auth: key, json: body, headers })

/** Issues a key with the (full-access) key, expecting 201. */
export const createKey = async (
  target: Target,
  key: string,
  body: { readonly name?: string; readonly scopes?: ReadonlyArray<string> } = {}
): Promise<CreatedKey & { readonly api_key: string }> => {
  const reply = await postKey(target, key, body)
  expect(reply.status, reply.text).toBe(201)
  return reply.body
}

/** Every key the account's full-access key lists, newest first. */
export const keysListed = (target: Target, key: string): Promise<ReadonlyArray<KeySummary>> =>
  listAll(target, key, "/api/keys", "keys")

/** The summary of a create's answer: what a listing shows of the key. */
export const summaryOf = ({ api_key: _, ...summary }: CreatedKey): KeySummary => summary

export const revokeKey = (target: Target, key: string, id: string): Promise<Reply> =>
  call(target, "DELETE", `/api/keys/${id}`, { auth: key })

/** An id of a key's shape that was never issued. */
export const unknownKeyId = () => neverIssued("key")

const isolation: Resource.Isolation = {
  noun: "api key",
  make: async ({ target }, key) => (await createKey(target, key, { name: "isolated", scopes: ["leads:read"] })).id,
  read: async ({ target }, key, id) => (await keysListed(target, key)).find((listed) => listed.id === id),
  unknownId: unknownKeyId
}

const at = (id: string) => ({ path: `/api/keys/${id}` })
const patchAt = (id: string) => ({ path: `/api/keys/${id}`, json: { scopes: ["analytics:read"] } })

let minted = 0

/** An account's own API keys, managed with a full-access key under /api/keys. */
export const resource: Resource.Resource = {
  name: "api keys",
  routes: [
    {
      method: "GET",
      path: "/api/keys",
      needs: "full access",
      succeeds: 200,
      lists: "keys",
      request: async () => ({ path: "/api/keys" })
    },
    {
      method: "POST",
      path: "/api/keys",
      needs: "full access",
      succeeds: 201,
      request: async ({ target }, account) => {
        // A name no other request uses: the refused request must have made no key of that name.
        const name = `minted ${++minted} ${crypto.randomUUID()}`
        return {
          path: "/api/keys",
          json: { name, scopes: ["leads:read"] },
          unchanged: async () =>
            expect((await keysListed(target, account.ownerKey)).map((key) => key.name)).not.toContain(name)
        }
      }
    },
    {
      method: "PATCH",
      path: "/api/keys/{key_id}",
      needs: "full access",
      succeeds: 200,
      addresses: patchAt,
      request: Resource.aimedAt(isolation, patchAt)
    },
    {
      method: "DELETE",
      path: "/api/keys/{key_id}",
      needs: "full access",
      succeeds: 200,
      addresses: at,
      request: Resource.aimedAt(isolation, at)
    }
  ],
  isolation,
  ledger: {
    tables: [
      {
        name: "api_keys",
        account: "account_id",
        // Whoever issues it: an account comes with its owner's key, the operator and a full-access key
        // issue more. A revoked key stays as a row (the listings show it).
        rows: Resource.perOperation({
          "POST /admin/v1/accounts": 1,
          "POST /admin/v1/accounts/{account_id}/keys": 1,
          "POST /api/keys": 1
        })
      }
    ],
    ids: {
      field: "id",
      create: "POST /api/keys",
      update: "PATCH /api/keys/{key_id}",
      list: { path: "/api/keys", field: "keys" },
      parameters: ["key_id"]
    }
  }
}
