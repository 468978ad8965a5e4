import { afterAll, beforeAll, describe } from "vitest"
import * as MockReceiver from "./MockReceiver.ts"
import type { Target } from "./TestServer.ts"
import { makeKit } from "./security/Kit.ts"
import { api1ObjectAuthorization } from "./security/Api1ObjectAuthorization.ts"
import { api2Authentication } from "./security/Api2Authentication.ts"
import { api3PropertyAuthorization } from "./security/Api3PropertyAuthorization.ts"
import { api4ResourceConsumption } from "./security/Api4ResourceConsumption.ts"
import { api5FunctionAuthorization } from "./security/Api5FunctionAuthorization.ts"
import { api8Misconfiguration } from "./security/Api8Misconfiguration.ts"
import { api9Inventory } from "./security/Api9Inventory.ts"

/**
 * The OWASP API Security Top 10 (2023), item by item, against a running Leadline over HTTP:
 * a test server on any wiring (test/security.memory.test.ts, test/security.sql.test.ts) or a
 * deployment (`LEADLINE_URL`, examples/contract-test). Each `describe` names the item it
 * covers. This runner holds the checks that cross resources; the route inventory and the
 * tenant-isolation cases come from the descriptors of `Resources.ts`, and each slice adds its
 * own checks under the item they belong to, and the key sets its routes admit (API5), in
 * `<slice>/*Security.ts`. Each item's checks are in `security/`. Every test makes its own accounts.
 *
 * Covered elsewhere or not applicable:
 * - API4 rate limiting: the testkit's rate-limit test and the server's shared rate-limit test;
 *   the request timeout: the testkit's request-timeout test.
 * - API6 (sensitive business flows): orders and campaigns are guarded by their scopes (API5)
 *   and their contract tests.
 * - API7 (SSRF): the testkit's webhooks-ssrf test (refused addresses at registration, and
 *   after DNS at delivery).
 * - API10 (unsafe consumption of APIs): the only third-party responses Leadline consumes are
 *   webhook receivers'; the webhooks test checks that a 3xx is not followed and a hanging
 *   receiver times out at 10 s.
 */

export interface SecurityOptions {
  /**
   * Start a webhook receiver on this machine for the cases that need a delivery to settle (the
   * default). The target must then deliver to loopback URLs (`WEBHOOK_ALLOW_PRIVATE_URLS=true`);
   * with `false`, those cases are left out and endpoints are registered at an unreachable URL.
   */
  readonly receiver?: boolean | undefined
}

/**
 * Registers the suite in the calling file. `getTarget` is read in the suite's `beforeAll`, so a
 * server the file starts in its own `beforeAll` is ready by then.
 */
export const securitySuite = (name: string, getTarget: () => Target, options: SecurityOptions = {}) =>
  describe(`OWASP API Security Top 10 on ${name}`, () => {
    const withReceiver = options.receiver ?? true
    let current: Target | undefined
    let receiver: MockReceiver.MockReceiver | undefined

    beforeAll(async () => {
      current = getTarget()
      if (withReceiver) receiver = await MockReceiver.start()
    })
    afterAll(async () => {
      await receiver?.close()
    })

    const kit = makeKit(
      () => current!,
      () => receiver,
      withReceiver
    )
    api1ObjectAuthorization(kit)
    api2Authentication(kit)
    api3PropertyAuthorization(kit)
    api4ResourceConsumption(kit)
    api5FunctionAuthorization(kit)
    api8Misconfiguration(kit)
    api9Inventory(kit)
  })
