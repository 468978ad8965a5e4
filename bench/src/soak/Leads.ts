import { type Api, sleep } from "./Api.ts"
import { create, Ledger } from "./Idempotent.ts"

/**
 * The leads load, in an account of its own: clients creating leads with idempotent retries
 * (every tenth to both servers at once, every seventh replayed once answered), listing them, and
 * deleting some; the invariants compare the database with the 201s they saw.
 */
export class Leads {
  readonly ledger = new Ledger()
  readonly deleted = new Set<string>()
  readonly unexpected: Array<string> = []
  private running = true
  private clients: Array<Promise<void>> = []
  private phone = 2_000_000

  private readonly api: Api
  private readonly auth: string
  private readonly giveUpAt: () => number

  constructor(api: Api, auth: string, giveUpAt: () => number) {
    this.api = api
    this.auth = auth
    this.giveUpAt = giveUpAt
  }

  start(clients: number) {
    this.clients = Array.from({ length: clients }, (_, id) => this.client(id))
  }

  async stop() {
    this.running = false
    await Promise.all(this.clients)
  }

  private async client(id: number) {
    for (let i = 0; this.running; i++) {
      const key = `soak-${id}-${i}`
      const reply = await create(this.api, this.ledger, {
        path: "/api/v1/leads",
        route: "POST /api/v1/leads",
        auth: this.auth,
        key,
        body: { name: `Soak ${id}.${i}`, phone: `+1415${this.phone++}` },
        twins: i % 10 === 0,
        replay: i % 7 === 3,
        giveUpAt: this.giveUpAt()
      })
      // Its phone is taken: only a second execution of this key could have taken it.
      if (reply.status === 409 && reply.body?.code === "conflict") this.ledger.violations.push(`key ${key} ran twice`)
      else if (reply.status !== 201)
        this.unexpected.push(`POST /api/v1/leads ${reply.status} ${JSON.stringify(reply.body)}`)
      await this.api.request("GET", "/api/v1/leads?limit=20", { auth: this.auth, route: "GET /api/v1/leads" })
      if (i % 5 === 4) {
        const victim = this.ledger.ids.get(`soak-${id}-${i - 2}`)
        // Retried until answered: a delete that committed before its answer was lost finds nothing (404).
        for (let tries = 0; victim !== undefined && tries < 50; tries++) {
          const reply = await this.api.request("DELETE", `/api/v1/leads/${victim}`, {
            auth: this.auth,
            route: "DELETE /api/v1/leads/{id}"
          })
          if (reply.status === 200 || reply.status === 404) {
            this.deleted.add(victim)
            break
          }
          await sleep(200)
        }
      }
      await sleep(20)
    }
  }
}
