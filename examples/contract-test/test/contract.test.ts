import { contractSuite } from "@leadline/testkit/ContractSuite"
import { LiveTarget } from "@leadline/testkit"

// LEADLINE_URL and LEADLINE_ADMIN_TOKEN name the Leadline under test; every test makes its own accounts.
const target = LiveTarget.fromEnv()

contractSuite(`Leadline's HTTP contract at ${target.baseUrl}`, () => target)
