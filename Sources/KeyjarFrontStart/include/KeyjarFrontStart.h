#ifndef KEYJAR_FRONT_START_H
#define KEYJAR_FRONT_START_H

/// Whether keyjar's front may run the command line itself, judged by its first word alone
/// (or the program's name): the words of FrontRoute's paths and `--version`. A looser test
/// than FrontRoute's; FrontCommandTests checks it lets every front command line through.
int keyjar_front_may_run(int argc, char *const argv[]);

#endif
