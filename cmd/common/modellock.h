/*
 * modellock.h: a program's lock on the model file it writes
 * (run/train.h's train_lock), held until the program exits, when the
 * lock is released and MODEL.lock removed, whatever the exit.
 */
#ifndef ATTN_CMD_MODELLOCK_H
#define ATTN_CMD_MODELLOCK_H

/* Locks path until exit; dies (exit 1) naming the process that holds
 * it.  One model a program. */
void lock_model(const char *path);

#endif
