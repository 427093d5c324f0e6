/**
 * The text of the service's messages: plain text first (what every client shows), and the same in
 * a minimal HTML part with the link as a link. Every value is escaped in the HTML part.
 *
 * @module
 */
import type { OutgoingMail } from "./transport.ts";

const ESCAPES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};
const esc = (s: string) => s.replace(/[&<>"']/g, (c) => ESCAPES[c]);

/** `2026-11-24 12:00 UTC`: what a human reads in a mail. */
function utc(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

/** The message that carries an email verification link. */
export function verificationMail(input: {
  to: string;
  link: string;
  expiresAt: number;
  baseUrl: string;
}): OutgoingMail {
  const { to, link, expiresAt, baseUrl } = input;
  const text = [
    "Hello,",
    "",
    `Someone (we hope you) asked Serpwright to confirm that ${to} is the email address of ` +
    "their account. To confirm it, open this link and press the button on the page:",
    "",
    link,
    "",
    `The link works once, until ${utc(expiresAt)}.`,
    "",
    "If you did not ask for this, ignore this message: nothing changes unless the link is " +
    "opened and confirmed.",
    "",
    `Serpwright, ${baseUrl}`,
  ].join("\n");
  const html = [
    '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">',
    "<title>Confirm your email address</title></head><body>",
    "<p>Hello,</p>",
    `<p>Someone (we hope you) asked Serpwright to confirm that <strong>${esc(to)}</strong> is ` +
    "the email address of their account. To confirm it, open this link and press the button " +
    "on the page:</p>",
    `<p><a href="${esc(link)}">Confirm my email address</a></p>`,
    `<p>Or paste this address into your browser: ${esc(link)}</p>`,
    `<p>The link works once, until ${esc(utc(expiresAt))}.</p>`,
    "<p>If you did not ask for this, ignore this message: nothing changes unless the link is " +
    "opened and confirmed.</p>",
    `<p>Serpwright, ${esc(baseUrl)}</p>`,
    "</body></html>",
  ].join("\n");
  return { to, subject: "Confirm your email address for Serpwright", text, html };
}
