/*
 * cli_workloads.c - the default sets of workload files the commands that run
 * many (demo, selftest) take when given none: a directory of the source
 * tree (./workloads, ./workloads/selftests) when ksmkit runs from one, else
 * the same directory of the installed set under PKGDATADIR.
 */
#include "config.h"
#include "cli.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

char **cli_workloads_in(const char *dir, size_t *n)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **list = NULL;

	*n = 0;
	if (!d)
		return NULL;
	while ((de = readdir(d)) != NULL) {
		size_t len = strlen(de->d_name);
		char **grown;

		if (len < 4 || strcmp(de->d_name + len - 3, ".wl") != 0)
			continue;
		grown = realloc(list, (*n + 1) * sizeof(*list));
		if (!grown)
			break;
		list = grown;
		if (asprintf(&list[*n], "%s/%s", dir, de->d_name) < 0)
			break;
		(*n)++;
	}
	closedir(d);
	if (list)
		qsort(list, *n, sizeof(*list), by_name);
	return list;
}

char **cli_default_set(const char *subdir, size_t *n)
{
	char path[4096];
	char **list;

	snprintf(path, sizeof(path), "%s", subdir);
	list = cli_workloads_in(path, n);
	if (list && *n)
		return list;
	free(list);
	snprintf(path, sizeof(path), "%s/%s", PKGDATADIR, subdir);
	return cli_workloads_in(path, n);
}

void cli_workloads_free(char **list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(list[i]);
	free(list);
}
