import * as LiveTarget from "../../src/LiveTarget.ts"
import { contractSuite } from "../../src/ContractSuite.ts"
import { securitySuite } from "../../src/SecuritySuite.ts"

// The suites examples/contract-test runs from the packs, here from the workspace's sources.
const target = LiveTarget.fromEnv()

contractSuite(`contract against ${target.baseUrl}`, () => target)
securitySuite(target.baseUrl, () => target, { receiver: process.env.LEADLINE_WEBHOOK_RECEIVER !== "off" })
