/**
 * {@link dev.confine.seatbelt.SeatbeltRunner}: the macOS seatbelt backend ({@code sandbox-exec} and
 * a generated profile), built and checked as the seed builds it, with its profile, argument vector
 * and environment as tested pure functions; it runs nothing yet, on any host (see the class
 * comment).
 */
package dev.confine.seatbelt;
