import type * as Resource from "../Resource.ts"
import type { Operation } from "./OpenApiDocument.ts"
import type { Reply } from "./RawHttp.ts"

/**
 * What the answers said happened, kept from the resources' descriptors: the
 * things that exist (made by a fresh 201, gone after a 200 removal), every id
 * seen (deleted ones make good 404 probes), and the rows each table gained. The
 * fuzz test holds the store to it; a resource takes part by having a descriptor.
 */
export class FuzzLedger {
  private readonly live = new Map<string, Map<string, unknown>>()
  private readonly seen = new Map<string, Array<string>>()
  /** Each thing as the answers last showed it (made, changed or listed), by resource and id. */
  private readonly latest = new Map<string, Map<string, any>>()
  /** Rows each counted table gained by fresh answers, by table name. */
  readonly written = new Map<string, number>()

  readonly resources: ReadonlyArray<Resource.Resource>

  constructor(resources: ReadonlyArray<Resource.Resource>) {
    this.resources = resources
    for (const resource of resources) {
      this.live.set(resource.name, new Map())
      this.seen.set(resource.name, [])
      this.latest.set(resource.name, new Map())
    }
    for (const table of this.countedTables()) this.written.set(table.name, 0)
  }

  /** Every table the descriptors name. */
  tables(): ReadonlyArray<Resource.Table> {
    return this.resources.flatMap((resource) => resource.ledger.tables)
  }

  /** The tables whose row count the answers determine. */
  countedTables(): ReadonlyArray<Resource.Table> {
    return this.tables().filter((table) => table.rows.kind !== "uncounted")
  }

  /** Resources whose every creation and removal the answers show, with a list route to check the store with. */
  tracked(): ReadonlyArray<Resource.Resource> {
    return this.resources.filter(({ ledger: { ids } }) => ids?.create && ids.remove && ids.list)
  }

  /** Records an id the test made some other way (the fuzzed account itself). */
  see(resource: string, id: string): void {
    const ids = this.seenOf(resource)
    if (!ids.includes(id)) ids.push(id)
  }

  /** Every id of the resource seen so far, in order. */
  ids(resource: string): ReadonlyArray<string> {
    return this.seenOf(resource)
  }

  /** The ids of the resource that the answers say exist now. */
  liveIds(resource: string): ReadonlyArray<string> {
    return [...this.liveOf(resource).keys()]
  }

  /** Ids for a parameter of an operation: by `<path> <name>`, else by name alone. */
  knownIds(operation: Pick<Operation, "path">, parameter: string): ReadonlyArray<string> {
    const takes = (key: string) => this.resources.filter((resource) => resource.ledger.ids?.parameters.includes(key))
    const exact = takes(`${operation.path} ${parameter}`)
    return (exact.length > 0 ? exact : takes(parameter)).flatMap((resource) => this.ids(resource.name))
  }

  record(operation: string, reply: Reply): void {
    const replayed = reply.headers["idempotent-replayed"] === "true"
    const fresh = reply.status >= 200 && reply.status < 300 && !replayed
    let body: any
    try {
      body = JSON.parse(reply.text)
    } catch {
      body = undefined
    }
    // Told before this answer updates what the ledger knows: an update's events depend on the thing before it.
    const events = fresh && body !== undefined ? this.eventsOf(operation, body) : []
    for (const resource of this.resources) {
      const ids = resource.ledger.ids
      if (ids === undefined || body === undefined) continue
      const latest = this.latest.get(resource.name)!
      // A replay makes nothing: it repeats the answer of a request already counted.
      if (operation === ids.create && reply.status === 201 && !replayed) {
        this.liveOf(resource.name).set(body[ids.field], body)
        this.see(resource.name, body[ids.field])
        latest.set(body[ids.field], body)
      }
      if (operation === ids.update && reply.status === 200) {
        latest.set(body[ids.field], body)
        if (this.liveOf(resource.name).has(body[ids.field])) this.liveOf(resource.name).set(body[ids.field], body)
      }
      if (operation === ids.remove && reply.status === 200) this.liveOf(resource.name).delete(body[ids.field])
      if (ids.list !== undefined && operation === `GET ${ids.list.path}` && reply.status === 200) {
        for (const item of body[ids.list.field] ?? []) {
          this.see(resource.name, item[ids.field])
          latest.set(item[ids.field], item)
        }
      }
    }
    if (!fresh) return
    const answer: Resource.Answer = {
      operation,
      body,
      events,
      live: (resource) => [...this.liveOf(resource).values()]
    }
    for (const table of this.countedTables()) {
      const gained =
        table.rows.kind === "per operation"
          ? (table.rows.changes[operation] ?? 0)
          : table.rows.kind === "computed"
            ? table.rows.count(answer)
            : 0
      this.written.set(table.name, this.written.get(table.name)! + gained)
    }
  }

  /** The event types a fresh answer of the operation emitted, by the descriptors' `emits`. */
  private eventsOf(operation: string, body: any): ReadonlyArray<string> {
    return this.resources.flatMap((resource) => {
      const emitted = resource.ledger.emits?.[operation]
      if (emitted === undefined) return []
      if (typeof emitted === "string") return [emitted]
      const field = resource.ledger.ids?.field ?? "id"
      return emitted(body, this.latest.get(resource.name)!.get(body?.[field]))
    })
  }

  private liveOf(resource: string): Map<string, unknown> {
    const found = this.live.get(resource)
    if (found === undefined) throw new Error(`no descriptor named ${resource}`)
    return found
  }

  private seenOf(resource: string): Array<string> {
    const found = this.seen.get(resource)
    if (found === undefined) throw new Error(`no descriptor named ${resource}`)
    return found
  }
}
