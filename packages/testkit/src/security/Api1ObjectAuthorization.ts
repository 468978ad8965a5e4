import { describe } from "vitest"
import { isolationSuite } from "../DescriptorSuites.ts"
import * as Resources from "../Resources.ts"
import type { Kit } from "./Kit.ts"

/** The suite's API1 checks, over the shared kit. */
export const api1ObjectAuthorization = (kit: Kit) => {
  const { context, withReceiver, sliceChecks } = kit
  describe("API1 broken object level authorization", () => {
    // Alice owns the objects; Bob, with full access to his own account, tries to reach them by id.
    isolationSuite(Resources.all, () => context, { receiver: withReceiver })
    sliceChecks("API1")
  })
}
