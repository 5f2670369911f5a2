package dev.confine.session;

/**
 * The result of one read of a session's output into the caller's buffer ({@link
 * ProcessSession#read(long, java.nio.ByteBuffer)}).
 *
 * @param nextSeq the cursor to pass to the next read: just past the last byte copied, or the cursor
 *     that was asked for when nothing was copied
 * @param length the number of bytes copied into the buffer
 * @param stream which output the bytes came from (a read copies from one stream only); null when
 *     nothing was copied
 * @param eof whether the session has ended and everything it wrote has been read: a read from
 *     {@code nextSeq} will return nothing more
 */
public record OutputRead(long nextSeq, int length, ProcessStream stream, boolean eof) {}
