import type { Scope } from "@leadline/core/auth/Scopes"
import { expect } from "vitest"
import type { AccountFixture } from "./Fixtures.ts"
import type * as MockReceiver from "./MockReceiver.ts"
import type { Target } from "./TestServer.ts"

/**
 * A resource as the tests see it: its routes and what each needs, how to make
 * one of its things and address it, and the SQL tables its rows live in. The
 * tenant-isolation, scope and fuzz-ledger tests are generated from these
 * descriptors (`Resources.ts` lists them), and the coverage tests fail when a route
 * of the API, a table of the database or an isolation case has no descriptor.
 */
export interface Resource {
  /** For test names: "leads", "webhook endpoints". */
  readonly name: string
  readonly routes: ReadonlyArray<Route>
  /**
   * How to make one of its things and what another account may not do to it, or
   * why the resource holds nothing an API key could reach across accounts.
   * Optional in the type so that a descriptor without one fails the coverage test.
   */
  readonly isolation?: Isolation | Exempt | undefined
  readonly ledger: Ledger
}

/** Where the tests run: the server, and a receiver it may deliver webhooks to (the security suite has one). */
export interface Context {
  readonly target: Target
  readonly receiver?: MockReceiver.MockReceiver | undefined
}

/** A webhook URL at `path` on the context's receiver, or one that never resolves when it has none. */
export const receiverUrl = (context: Context, path: string): string =>
  context.receiver?.endpoint(path).url ?? `https://receiver.invalid${path}/${crypto.randomUUID()}`

/**
 * What lets a request through: a valid key of any scope, one of the scopes (the
 * narrowest, which a 403 names, first), only a key with no scopes (full access),
 * or the operator's admin token, which no API key is.
 */
export type Needs = "any key" | "full access" | "admin token" | readonly [Scope, ...Array<Scope>]

export interface Route {
  readonly method: "GET" | "POST" | "PATCH" | "DELETE"
  /** As the OpenAPI document spells it: `/api/v1/leads/{id}`. */
  readonly path: string
  readonly needs: Needs
  /** What the route answers a credential that may use it. */
  readonly succeeds: number
  /** Set on a route that addresses one thing: the request aimed at the thing with that id. */
  readonly addresses?: ((id: string) => Addressed) | undefined
  /** Set on a read whose query is required (a search): the query its probes send, `q=delivery`. */
  readonly query?: string | undefined
  /** Set on a list route: the field of its answer that holds the items (paged with `limit` and `offset`). */
  readonly lists?: string | undefined
  /** A fresh request, against things of `account` made with its owner key, that gets `succeeds`. */
  readonly request: (context: Context, account: AccountFixture) => Promise<RouteRequest>
}

export interface Addressed {
  /** Path and query. */
  readonly path: string
  readonly json?: unknown
  /** A `multipart/form-data` body instead of JSON (an upload). */
  readonly form?: FormData | undefined
  /** A body that is not JSON (an import's file), sent as it is with its `Content-Type`. */
  readonly file?: { readonly body: string; readonly contentType: string } | undefined
}

/** The body options of `Http.call` for an addressed request: its JSON, its form or its file. */
export const bodyOf = (
  request: Addressed
): {
  readonly json?: unknown
  readonly form?: FormData
  readonly raw?: string
  readonly headers?: Record<string, string>
} =>
  request.form !== undefined
    ? { form: request.form }
    : request.file !== undefined
      ? { raw: request.file.body, headers: { "content-type": request.file.contentType } }
      : request.json === undefined
        ? {}
        : { json: request.json }

export interface RouteRequest extends Addressed {
  /** Asserts that the object the request aimed at is as it was (after a refused request). */
  readonly unchanged?: (() => Promise<void>) | undefined
}

export interface Isolation {
  /** The thing's name in a 404: `No <noun> with id <id>`. */
  readonly noun: string
  /** Makes one in the account of `key`, through the HTTP API; returns its id. */
  readonly make: (context: Context, key: string) => Promise<string>
  /** The thing as its owner sees it: the same before and after another account's attempts. */
  readonly read: (context: Context, key: string, id: string) => Promise<unknown>
  /** An id of the right shape that was never issued: another account's id must get the same answer. */
  readonly unknownId: () => string
  /** `make` needs the receiver (a delivery that settles), so only the security suite can run the case. */
  readonly needsReceiver?: boolean | undefined
}

/** Why a resource has no isolation case; allowed only when no API key reaches its routes. */
export interface Exempt {
  readonly exempt: string
}

export const isExempt = (isolation: Isolation | Exempt | undefined): isolation is Exempt =>
  isolation !== undefined && "exempt" in isolation

/** What the fuzzer needs to hold the store to the answers: tables, ids, events. */
export interface Ledger {
  /** The SQL tables its rows live in, and how the answers change their row counts. */
  readonly tables: ReadonlyArray<Table>
  readonly ids?: LedgerIds | undefined
  /**
   * The event type a fresh 2xx answer of an operation emits, by operation key (`POST /api/v1/leads`),
   * or, for an operation that emits only for some changes, the types it emitted, told from the
   * thing after (the answer) and before (as the answers last showed it; undefined when none did).
   */
  readonly emits?: Readonly<Record<string, string | Emitted>> | undefined
}

export type Emitted = (after: any, before: any) => ReadonlyArray<string>

export interface LedgerIds {
  /** The field of an answer, and of a listed item, that holds the id. */
  readonly field: string
  /** The operation whose fresh 201 makes one (its answer is the thing). */
  readonly create?: string | undefined
  /** The operation whose 200 changes one (its answer is the thing after the change). */
  readonly update?: string | undefined
  /** The operation whose 200 removes one (its answer names the id). */
  readonly remove?: string | undefined
  /** The list route and the field of its answer with the items; with create and remove, the store is checked against the answers. */
  readonly list?: { readonly path: string; readonly field: string } | undefined
  /** Parameters that take these ids: `<path> <name>` for one operation's, `<name>` for every operation's. */
  readonly parameters: ReadonlyArray<string>
  /**
   * For things no API route creates (conversations and messages come from WhatsApp's
   * webhook): makes one in the account and returns its id, for the fuzzer to aim at.
   */
  readonly make?: ((context: Context, account: AccountFixture) => Promise<string>) | undefined
}

export interface Table {
  readonly name: string
  /** The column holding the owning account, or undefined when the table has none. */
  readonly account: string | undefined
  readonly rows: Rows
}

/**
 * How a table's row count follows from the fresh (2xx, not replayed) answers:
 * a fixed change per operation, a count computed from the answer, or, where the
 * answers cannot tell, the reason; such a table is still checked for rows
 * written to accounts the answers did not concern.
 */
export type Rows =
  | { readonly kind: "per operation"; readonly changes: Readonly<Record<string, number>> }
  | { readonly kind: "computed"; readonly count: (answer: Answer) => number }
  | { readonly kind: "uncounted"; readonly reason: string }

export const perOperation = (changes: Readonly<Record<string, number>>): Rows => ({ kind: "per operation", changes })
export const computed = (count: (answer: Answer) => number): Rows => ({ kind: "computed", count })
export const uncounted = (reason: string): Rows => ({ kind: "uncounted", reason })

/** One fresh answer, as the ledger's table rules see it. */
export interface Answer {
  /** `POST /api/v1/leads` */
  readonly operation: string
  readonly body: any
  /** The event types it emitted (every resource's `emits`). */
  readonly events: ReadonlyArray<string>
  /** The things of a resource that the answers so far said exist, as answered. */
  readonly live: (resource: string) => ReadonlyArray<any>
}

export const routeName = (route: Pick<Route, "method" | "path">): string => `${route.method} ${route.path}`

/** Whether a key with these scopes (none: full access) may use a route that needs `needs`. */
export const allows = (needs: Needs, scopes: ReadonlyArray<string>): boolean =>
  needs === "any key" ||
  (needs !== "admin token" &&
    (scopes.length === 0 || (needs !== "full access" && needs.some((s) => scopes.includes(s)))))

/** What a 403 names for a route: its narrowest scope, or "full access". */
export const requirement = (needs: Exclude<Needs, "any key" | "admin token">): string =>
  needs === "full access" ? "full access" : needs[0]

/** The read a probe sends to a GET that addresses nothing: its required query, and its largest page if it lists. */
export const probePath = (route: Route): string => {
  const path = route.query === undefined ? route.path : `${route.path}?${route.query}`
  return route.lists === undefined ? path : `${path}${path.includes("?") ? "&" : "?"}limit=100`
}

/** Routes an API key may reach, as opposed to the operator's. */
export const isApiRoute = (route: Route): boolean => route.needs !== "admin token"

/**
 * The request of a route that addresses one thing: a fresh one in `account`,
 * and the check that a refused request left it as it was.
 */
export const aimedAt =
  (isolation: Isolation, addresses: (id: string) => Addressed) =>
  async (context: Context, account: AccountFixture): Promise<RouteRequest> => {
    const id = await isolation.make(context, account.ownerKey)
    const before = await isolation.read(context, account.ownerKey, id)
    return {
      ...addresses(id),
      unchanged: async () => expect(await isolation.read(context, account.ownerKey, id)).toEqual(before)
    }
  }
