/**
 * A small help centre of one business (a bakery in São Paulo that sells on WhatsApp) and questions
 * its customers ask, each with the page that answers it. The search-quality test uploads the pages
 * and holds the hit rate at rank 1 and rank 3 above a floor. The questions were written as customers
 * phrase them (paraphrases, chatty, words shared across pages), before the search ran on them, and
 * are not to be edited to make it pass.
 */

export interface CorpusSource {
  readonly title: string
  readonly content: string
}

export interface CorpusQuestion {
  readonly question: string
  /** The title of the page that answers it. */
  readonly source: string
}

export const sources: ReadonlyArray<CorpusSource> = [
  {
    title: "Shipping and delivery",
    content: `# Shipping and delivery

## Where we deliver
Our couriers deliver across the city of São Paulo, including Moema, Pinheiros, Vila Madalena, Itaim Bibi and Santana. Outside the city we deliver to Osasco, Guarulhos and Santo André on Tuesdays and Fridays.

## How long it takes
Orders confirmed before 11 am leave the bakery the same afternoon. Everything else is delivered the next business day. Sunday orders go out on Monday morning.

## Fees
Delivery costs R$ 12 inside the city and R$ 25 to the neighbouring cities. It is free for orders above R$ 150.

## Tracking
When the courier leaves, we send a WhatsApp message with a link to follow the motorbike on a map.`
  },
  {
    title: "Returns and refunds",
    content: `# Returns and refunds

## Something wrong with your order
If a product arrives damaged, stale or is not what you ordered, send us a photo on WhatsApp within 24 hours of delivery. We replace it with the next courier or refund it, as you prefer.

## Refunds
Refunds go back the way you paid: Pix refunds arrive within one hour, card refunds take up to two invoices to appear. Cash payments are refunded by Pix.

## What we cannot take back
For food safety we cannot accept returns of opened products that had no problem, and custom cakes cannot be returned once the decoration has been approved.`
  },
  {
    title: "Opening hours and shops",
    content: `# Opening hours and shops

## Hours
Our shops open Monday to Saturday from 6:30 am to 8 pm, and on Sundays and public holidays from 7 am to 1 pm. We close on 25 December and 1 January.

## Addresses
The Pinheiros shop is at Rua dos Pinheiros 1200. The Moema shop is at Avenida Ibirapuera 3100, next to the metro station. Both have tables and free Wi-Fi.

## Parking
The Moema shop has six parking spaces at the back; in Pinheiros there is a paid car park across the street.`
  },
  {
    title: "Payment methods",
    content: `# Payment methods

## What we accept
You can pay with Pix, Visa, Mastercard, Elo and American Express credit or debit cards, meal vouchers (VR and Alelo) in the shops, and cash on delivery.

## Paying on WhatsApp
After you confirm an order we send a Pix key and a QR code. The order is prepared as soon as the Pix arrives. Card payments on WhatsApp go through a secure payment link.

## Invoices
Every order gets an electronic invoice (nota fiscal). To have your CPF or CNPJ on it, tell us before paying.`
  },
  {
    title: "Allergens and ingredients",
    content: `# Allergens and ingredients

## Gluten
Our kitchen handles wheat flour every day, so no product is safe for people with coeliac disease, even those made without wheat.

## Nuts and dairy
Almonds, walnuts and hazelnuts are used in several cakes and cookies. The croissants, brioche and most cakes contain butter and milk.

## Vegan options
The sourdough loaves, the focaccia and the carrot cake with chocolate are vegan: no eggs, milk or butter.

## Sugar
We have no sugar-free products, but the wholegrain bread has no added sugar.`
  },
  {
    title: "Custom cakes",
    content: `# Custom cakes

## Ordering
Custom cakes need at least 72 hours' notice; wedding cakes need three weeks. Tell us the date, the number of guests, the flavour and any theme.

## Prices and deposit
Cakes start at R$ 180 for 20 slices. A 50% deposit confirms the booking, and the rest is paid on collection or delivery.

## Changes and cancellations
You can change the flavour or the decoration until 48 hours before. A cancellation more than 48 hours before gets the deposit back; after that the deposit is kept.

## Tasting
Couples ordering a wedding cake can book a free tasting of three flavours on Saturday mornings.`
  },
  {
    title: "Loyalty club",
    content: `# Loyalty club

## How it works
Every R$ 1 you spend earns one point, in the shops and on WhatsApp. Give your phone number at the till or order from the number you registered.

## Rewards
With 100 points you get a free coffee, with 250 points a loaf of sourdough and with 600 points a whole cake of the week.

## Expiry
Points are valid for 12 months after they are earned. Your balance is on every receipt, or ask us on WhatsApp.

## Birthday
Members get a slice of cake of their choice in their birthday month.`
  },
  {
    title: "Ordering on WhatsApp",
    content: `# Ordering on WhatsApp

## Placing an order
Open our catalogue in WhatsApp, add products to the cart and send it. We reply with the total, the delivery fee and the time it will arrive.

## Changing or cancelling an order
You can add or remove items until the order is being prepared: just write to us. Once it has left the bakery it can no longer be cancelled.

## Talking to a person
Our assistant answers most questions at any hour. Write "atendente" and a member of the team takes over between 7 am and 7 pm.`
  }
]

export const questions: ReadonlyArray<CorpusQuestion> = [
  { question: "do you deliver to Moema?", source: "Shipping and delivery" },
  { question: "how long does shipping take", source: "Shipping and delivery" },
  { question: "how much is the delivery fee to Guarulhos?", source: "Shipping and delivery" },
  { question: "can I follow the courier on a map", source: "Shipping and delivery" },
  { question: "my bread arrived stale, what can I do?", source: "Returns and refunds" },
  { question: "when will I get my money back if I paid by Pix", source: "Returns and refunds" },
  { question: "can I return a cake after I approved the decoration?", source: "Returns and refunds" },
  { question: "what time do you open on Sunday", source: "Opening hours and shops" },
  { question: "where is the Pinheiros shop?", source: "Opening hours and shops" },
  { question: "is there parking at the Moema shop", source: "Opening hours and shops" },
  { question: "are you open on Christmas day?", source: "Opening hours and shops" },
  { question: "do you take American Express?", source: "Payment methods" },
  { question: "can I pay with my meal voucher VR", source: "Payment methods" },
  { question: "I need an invoice with my CNPJ", source: "Payment methods" },
  { question: "is anything gluten free? I have coeliac disease", source: "Allergens and ingredients" },
  { question: "which cakes have nuts in them", source: "Allergens and ingredients" },
  { question: "do you have vegan options?", source: "Allergens and ingredients" },
  { question: "how far in advance should I order a birthday cake", source: "Custom cakes" },
  { question: "how much deposit do you need for a cake?", source: "Custom cakes" },
  { question: "can we try the wedding cake flavours before ordering", source: "Custom cakes" },
  { question: "if I cancel my cake order do I get the deposit back?", source: "Custom cakes" },
  { question: "how many points do I need for a free coffee", source: "Loyalty club" },
  { question: "do my points expire?", source: "Loyalty club" },
  { question: "do members get anything for their birthday", source: "Loyalty club" },
  { question: "how do I place an order through the catalogue?", source: "Ordering on WhatsApp" },
  { question: "can I still add something to my order", source: "Ordering on WhatsApp" },
  { question: "I want to talk to a real person", source: "Ordering on WhatsApp" }
]
