import { Schema } from "effect"
import { DomainError } from "../Errors.ts"

/** A MARKETING template sent through the API to a lead that opted out (docs/contract-messaging.md §8.6). */
export class LeadOptedOut extends DomainError<LeadOptedOut>()(
  "LeadOptedOut",
  { leadId: Schema.String, template: Schema.String },
  {
    status: 409,
    code: "lead_opted_out",
    description:
      "A MARKETING template to a lead whose marketing_opt_out is set; utility and authentication templates and replies in the window still go. Nothing was queued.",
    message: ({ leadId, template }) => `Lead ${leadId} opted out of marketing: ${template} is a MARKETING template`
  }
) {}
