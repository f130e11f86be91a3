/* outfile.c: what a file written whole may replace; see outfile.h. */
#include <sys/stat.h>
#include "errmsg.h"
#include "outfile.h"

int outfile_check(const char *path)
{
	struct stat st;
	const char *what;

	if (lstat(path, &st) < 0 || S_ISREG(st.st_mode))
		return 0;
	what = S_ISLNK(st.st_mode) ? "a symbolic link" :
	       S_ISDIR(st.st_mode) ? "a directory" :
	       S_ISCHR(st.st_mode) ? "a character device" :
	       S_ISBLK(st.st_mode) ? "a block device" :
	       S_ISFIFO(st.st_mode) ? "a FIFO" :
	       S_ISSOCK(st.st_mode) ? "a socket" : "of another kind";
	err_set("%s exists and is not a regular file (%s): not replaced",
		path, what);
	return -1;
}
