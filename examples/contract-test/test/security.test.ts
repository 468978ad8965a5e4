import { LiveTarget } from "@leadline/testkit"
import { securitySuite } from "@leadline/testkit/SecuritySuite"

const target = LiveTarget.fromEnv()

// The suite runs a webhook receiver on this machine: the server must accept loopback webhook URLs
// (WEBHOOK_ALLOW_PRIVATE_URLS=true). For a server elsewhere, LEADLINE_WEBHOOK_RECEIVER=off leaves
// out the cases that need a delivery.
securitySuite(target.baseUrl, () => target, { receiver: process.env.LEADLINE_WEBHOOK_RECEIVER !== "off" })
