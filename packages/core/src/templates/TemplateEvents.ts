import * as Event from "../events/Event.ts"
import { MessageTemplate } from "./Template.ts"

/**
 * Meta moved a template's status, quality or category (its webhooks, docs/contract-messaging.md
 * §8.7): the template as it is now, `previous_attributes` the fields that changed. Read with
 * `conversations.view`, as templates are.
 */
export const updated = Event.define("template.updated", MessageTemplate, "conversations.view")
