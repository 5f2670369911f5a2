/** Confine: run a command under an enforced policy. */
package dev.confine;
