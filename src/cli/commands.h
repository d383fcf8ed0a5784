/*
 * cli/commands.h - the subcommands of `mfu`. Each lives in its own cmd_NAME.c and is listed in
 * the table in main.c.
 */
#ifndef MFU_COMMANDS_H
#define MFU_COMMANDS_H

int cmd_convert(int argc, char **argv);

#endif
