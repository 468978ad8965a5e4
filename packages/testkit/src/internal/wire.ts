import { expect } from "vitest"
import { call } from "../Http.ts"
import type { Target } from "../TestServer.ts"

/** Bodies and helpers the suites share: the contract's exact error bodies, paging, waiting. */

export const UNAUTHORIZED = { error: "Invalid or missing API key", code: "unauthorized" }

export const forbidden = (requirement: string) => ({
  error: `Insufficient scope: requires ${requirement}`,
  code: "forbidden"
})

export const notFound = (noun: string, id: string) => ({ error: `No ${noun} with id ${id}`, code: "not_found" })

export const NO_SUCH_ROUTE = { error: "No such route", code: "not_found" }

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Probes until `done` holds or `timeoutMs` passes; returns the last value either way. */
export const until = async <A>(
  probe: () => Promise<A>,
  done: (value: A) => boolean,
  timeoutMs = 10_000
): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  let value = await probe()
  while (!done(value) && Date.now() < deadline) {
    await sleep(50)
    value = await probe()
  }
  return value
}

/** `until`, failing with the last value when `done` never held: for a test that must see it happen. */
export const settled = async <A>(
  what: string,
  probe: () => Promise<A>,
  done: (value: A) => boolean,
  timeoutMs = 20_000
): Promise<A> => {
  const value = await until(probe, done, timeoutMs)
  if (!done(value)) throw new Error(`never ${what}: ${JSON.stringify(value)}`)
  return value
}

/** Every item a list route shows the key, page by page through `next_offset`. */
export const listAll = async (
  target: Target,
  key: string,
  path: string,
  field: string,
  limit = 100
): Promise<ReadonlyArray<any>> => {
  const items: Array<any> = []
  let offset: number | null = 0
  const separator = path.includes("?") ? "&" : "?"
  while (offset !== null) {
    const page = await call(target, "GET", `${path}${separator}limit=${limit}&offset=${offset}`, { auth: key })
    expect(page.status, page.text).toBe(200)
    items.push(...page.body[field])
    offset = page.body.meta.next_offset
  }
  return items
}

/** A sortable-looking id of the given prefix that was never issued. */
export const neverIssued = (prefix: string) =>
  `${prefix}_${"0".repeat(10)}${crypto.randomUUID().replaceAll("-", "").slice(0, 16)}`

/** The ids on the first page of a list route, for the key. */
export const listedIds = async (target: Target, key: string, path: string, field: string) => {
  const reply = await call(target, "GET", path, { auth: key })
  expect(reply.status, reply.text).toBe(200)
  return reply.body[field].map((item: { id: string }) => item.id) as ReadonlyArray<string>
}
