import { SCOPES } from "@leadline/core/auth/Scopes"
import { beforeAll, describe, expect, it } from "vitest"
import { type AccountFixture, makeAccount, makeKey } from "./Fixtures.ts"
import { call, type Reply } from "./Http.ts"
import { forbidden, listAll, notFound } from "./internal/wire.ts"
import * as Resource from "./Resource.ts"

/**
 * The tests generated from the resources' descriptors: tenant isolation on every
 * route that addresses a thing or reads a list, and the scope each route needs.
 * A resource gets them by having a descriptor in `Resources.ts`.
 */

/** Every scope but the ones that would grant the route: a key with these still may not use it. */
export const lackingScopes = (needs: Exclude<Resource.Needs, "any key" | "admin token">): ReadonlyArray<string> =>
  needs === "full access" ? SCOPES : SCOPES.filter((scope) => !needs.includes(scope))

const send = (context: Resource.Context, method: string, request: Resource.Addressed, auth: string): Promise<Reply> =>
  call(context.target, method, request.path, { auth, ...Resource.bodyOf(request) })

/** A GET of a list route asks for its largest page, so that one answer shows as much as it can. */

export interface IsolationOptions {
  /** Whether the context will have a receiver: the cases whose `make` needs one are defined only then. */
  readonly receiver: boolean
}

/**
 * For each resource, a thing made by account A (Alice), and account B (Bob), with
 * a full-access key of his own, trying it: every route that addresses it answers
 * 404 with the exact body, as for an id never issued; a key of Bob's without the
 * route's scope gets the same 403 as for an id never issued (the scope is checked
 * before the lookup); his reads never show it; and after each attempt Alice's
 * thing is as it was.
 */
export const isolationSuite = (
  resources: ReadonlyArray<Resource.Resource>,
  getContext: () => Resource.Context,
  options: IsolationOptions
) =>
  describe("tenant isolation, from the descriptors", () => {
    for (const resource of resources) {
      const isolation = resource.isolation
      // The coverage tests fail on a resource without a case; an exempt one has no API route.
      if (isolation === undefined || Resource.isExempt(isolation)) continue
      if (isolation.needsReceiver === true && !options.receiver) continue
      describe(`another account's ${isolation.noun} (${resource.name})`, () => {
        let alice: AccountFixture
        let bob: AccountFixture
        let id: string
        let before: unknown

        beforeAll(async () => {
          const { target } = getContext()
          alice = await makeAccount(target, { name: "Alice Ltd" })
          bob = await makeAccount(target, { name: "Bob Ltd" })
          id = await isolation.make(getContext(), alice.ownerKey)
          before = await isolation.read(getContext(), alice.ownerKey, id)
        })

        const unchanged = async () => expect(await isolation.read(getContext(), alice.ownerKey, id)).toEqual(before)

        /** Bob's answer for Alice's id, and his answer for an id never issued with Alice's id put in its place. */
        const attempt = async (route: Resource.Route, addresses: (id: string) => Resource.Addressed, key: string) => {
          const reply = await send(getContext(), route.method, addresses(id), key)
          const never = isolation.unknownId()
          const neverReply = await send(getContext(), route.method, addresses(never), key)
          expect(neverReply.status, neverReply.text).toBe(reply.status)
          expect(neverReply.text.replaceAll(never, id)).toBe(reply.text)
          return reply
        }

        for (const route of resource.routes.filter(Resource.isApiRoute)) {
          const name = Resource.routeName(route)
          const addresses = route.addresses
          if (addresses !== undefined) {
            it(`${name} is 404 with the exact body, as for an id never issued, and changes nothing`, async () => {
              const reply = await attempt(route, addresses, bob.ownerKey)
              expect(reply.status, reply.text).toBe(404)
              expect(reply.body).toEqual(notFound(isolation.noun, id))
              await unchanged()
            })
            const needs = route.needs
            if (needs !== "any key" && needs !== "admin token") {
              const requirement = Resource.requirement(needs)
              it(`${name} with a key lacking ${requirement} is 403, as for an id never issued`, async () => {
                const key = await makeKey(getContext().target, bob.accountId, {
                  name: "lacking",
                  scopes: lackingScopes(needs)
                })
                const reply = await attempt(route, addresses, key.apiKey)
                expect(reply.status, reply.text).toBe(403)
                expect(reply.body).toEqual(forbidden(requirement))
                await unchanged()
              })
            }
          } else if (route.method === "GET") {
            it(`${name} never shows it`, async () => {
              const { target } = getContext()
              const reply = await call(target, "GET", Resource.probePath(route), { auth: bob.ownerKey })
              expect(reply.status, reply.text).toBe(200)
              expect(reply.text).not.toContain(id)
              if (route.lists !== undefined) {
                const items = await listAll(target, bob.ownerKey, route.path, route.lists)
                expect(items.map((item: { id: string }) => item.id)).not.toContain(id)
              }
              await unchanged()
            })
          }
        }
      })
    }
  })

/**
 * For each route an API key reaches: a key whose scopes do not grant it gets 403
 * with the exact body naming the narrowest scope, and leaves things as they were;
 * a key with exactly one granting scope (or full access, where no scope grants it;
 * a key of any one scope, where any key may)
 * gets what the route answers when allowed.
 */
export const scopeSuite = (resources: ReadonlyArray<Resource.Resource>, getContext: () => Resource.Context) =>
  describe("scopes, from the descriptors", () => {
    let account: AccountFixture

    beforeAll(async () => {
      account = await makeAccount(getContext().target, {
        name: "Scoped",
        keys: Object.fromEntries(SCOPES.map((scope) => [scope, [scope]]))
      })
    })

    const keyOf = (scope: string) => (scope === "full access" ? account.ownerKey : account.keys[scope]!.apiKey)

    for (const route of resources.flatMap((resource) => resource.routes).filter(Resource.isApiRoute)) {
      const name = Resource.routeName(route)
      const needs = route.needs
      if (needs === "admin token") continue
      if (needs !== "any key") {
        const requirement = Resource.requirement(needs)
        it(`${name} refuses a key without ${requirement} with the exact 403 body`, async () => {
          const context = getContext()
          const request = await route.request(context, account)
          const key = await makeKey(context.target, account.accountId, {
            name: "lacking",
            scopes: lackingScopes(needs)
          })
          const reply = await send(context, route.method, request, key.apiKey)
          expect(reply.status, reply.text).toBe(403)
          expect(reply.text).toBe(JSON.stringify(forbidden(requirement)))
          await request.unchanged?.()
        })
      }
      // A route for any key is tried with a key of one unrelated scope.
      const granting = needs === "any key" ? [SCOPES[0]] : needs === "full access" ? ["full access"] : needs
      for (const scope of granting) {
        const which = needs === "any key" ? `any scope (${scope})` : `exactly ${scope}`
        it(`${name} admits a key with ${which}`, async () => {
          const context = getContext()
          const request = await route.request(context, account)
          const reply = await send(context, route.method, request, keyOf(scope))
          expect(reply.status, reply.text).toBe(route.succeeds)
        })
      }
    }
  })
