/* main.c: crashy's entry point. */
#include <stdio.h>
#include "crashy.h"

int main(int argc, char **argv)
{
	(void)argv;
	return run_records(argc);
}
