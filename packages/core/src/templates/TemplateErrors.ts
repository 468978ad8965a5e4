import { Schema } from "effect"
import { DomainError } from "../Errors.ts"

/** Meta's template endpoints failed or refused the request; nothing changed in Leadline. */
export class TemplateProviderError extends DomainError<TemplateProviderError>()(
  "TemplateProviderError",
  { message: Schema.String, providerCode: Schema.NullOr(Schema.Number) },
  {
    status: 502,
    code: "whatsapp_provider_error",
    description:
      "Meta's Graph API failed or refused the template request; the message is Graph's own (it names what Meta objects to). Nothing changed in Leadline.",
    // Graph's template messages name Meta's rules, never the token or the caller's other data.
    message: ({ message, providerCode }) =>
      providerCode === null ? `WhatsApp: ${message}` : `WhatsApp (Graph error ${providerCode}): ${message}`
  }
) {}
