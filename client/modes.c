/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * What a node offers, as a client sees it: every (format, discrete size)
 * with its frame rates, and TRY_FMT's line and image sizes for it.
 */
#include "config.h"

#include <errno.h>
#include <sys/ioctl.h>

#include "client.h"

int
client_xioctl(int fd, unsigned long request, void *arg)
{
	int r;

	do
		r = ioctl(fd, request, arg);
	while (r < 0 && errno == EINTR);
	return r < 0 ? -errno : 0;
}

int
client_probe_modes(int fd, bool (*usable)(uint32_t fourcc), GArray *modes)
{
	struct v4l2_fmtdesc fd_desc = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };

	for (; client_xioctl(fd, VIDIOC_ENUM_FMT, &fd_desc) == 0; fd_desc.index++) {
		struct v4l2_frmsizeenum fs = { .pixel_format = fd_desc.pixelformat };

		if (usable && !usable(fd_desc.pixelformat)) {
			g_debug("format %.4s not offered", (const char *)&fd_desc.pixelformat);
			continue;
		}
		for (; client_xioctl(fd, VIDIOC_ENUM_FRAMESIZES, &fs) == 0; fs.index++) {
			struct v4l2_frmivalenum fi = {
				.pixel_format = fs.pixel_format,
				.width = fs.discrete.width,
				.height = fs.discrete.height,
			};
			struct v4l2_format f = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE };
			struct client_mode mode = {
				.fourcc = fs.pixel_format,
				.width = fs.discrete.width,
				.height = fs.discrete.height,
			};
			int r;

			/* Browsers and OBS skip size ranges; the daemon lists none. */
			if (fs.type != V4L2_FRMSIZE_TYPE_DISCRETE)
				break;
			for (; mode.n_rates < CLIENT_MAX_RATES &&
			       client_xioctl(fd, VIDIOC_ENUM_FRAMEINTERVALS, &fi) == 0; fi.index++) {
				if (fi.type != V4L2_FRMIVAL_TYPE_DISCRETE || !fi.discrete.numerator ||
				    !fi.discrete.denominator)
					break;
				mode.rates[mode.n_rates++] = (struct client_rate){
					fi.discrete.denominator, fi.discrete.numerator
				};
			}
			if (mode.n_rates == 0)
				continue;
			f.fmt.pix.pixelformat = mode.fourcc;
			f.fmt.pix.width = mode.width;
			f.fmt.pix.height = mode.height;
			f.fmt.pix.field = V4L2_FIELD_NONE;
			r = client_xioctl(fd, VIDIOC_TRY_FMT, &f);
			if (r < 0)
				return r;
			if (f.fmt.pix.pixelformat != mode.fourcc || f.fmt.pix.width != mode.width ||
			    f.fmt.pix.height != mode.height || f.fmt.pix.sizeimage == 0)
				continue;	/* listed but not settable: not offered */
			mode.stride = f.fmt.pix.bytesperline;
			mode.size = f.fmt.pix.sizeimage;
			g_array_append_val(modes, mode);
		}
	}
	return 0;
}
