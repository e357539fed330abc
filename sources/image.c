/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Still images: PNG (libpng's simplified API: any bit depth, palette, grey,
 * alpha composited on black) and JPEG (libjpeg-turbo via convert.c),
 * decoded once at open to RGB24 and then delivered as a steady stream.
 * Files up to V4L2CUSE_FILE_READER_MAX_IMAGE bytes and 8192x8192 pixels.
 */

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <glib.h>
#include <png.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"
#include "file-reader.h"

struct image_reader {
	struct v4l2cuse_file_reader base;
	uint8_t *rgb;
	uint32_t width, height;
};

static struct image_reader *
image_from(struct v4l2cuse_file_reader *r)
{
	return (struct image_reader *)r;
}

static int
image_next(struct v4l2cuse_file_reader *r, struct v4l2cuse_image *ret)
{
	struct image_reader *im = image_from(r);

	*ret = (struct v4l2cuse_image){
		.fourcc = V4L2_PIX_FMT_RGB24, .width = im->width, .height = im->height,
		.data = im->rgb, .size = (size_t)im->width * im->height * 3,
	};
	return 0;
}

static int
image_rewind(struct v4l2cuse_file_reader *r)
{
	return 0;
}

static void
image_destroy(struct v4l2cuse_file_reader *r)
{
	struct image_reader *im = image_from(r);

	g_free(im->rgb);
	g_free(im);
}

static const struct v4l2cuse_file_reader_ops image_ops = {
	.name = "image",
	.next = image_next,
	.rewind = image_rewind,
	.destroy = image_destroy,
};

/* The whole file, at most V4L2CUSE_FILE_READER_MAX_IMAGE bytes. */
static int
image_slurp(FILE *f, uint8_t **ret, size_t *ret_len, char **ret_error)
{
	size_t cap = 1 << 16, len = 0, n;
	uint8_t *buf = g_malloc(cap);

	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			if (cap >= V4L2CUSE_FILE_READER_MAX_IMAGE) {
				g_free(buf);
				*ret_error = g_strdup_printf("image larger than %u MiB",
							     V4L2CUSE_FILE_READER_MAX_IMAGE >> 20);
				return -EFBIG;
			}
			cap = MIN(cap * 2, (size_t)V4L2CUSE_FILE_READER_MAX_IMAGE + 1);
			buf = g_realloc(buf, cap);
		}
	}
	if (ferror(f)) {
		g_free(buf);
		*ret_error = g_strdup(g_strerror(EIO));
		return -EIO;
	}
	*ret = buf;
	*ret_len = len;
	return 0;
}

static int
image_load_png(struct image_reader *im, const uint8_t *data, size_t len, char **ret_error)
{
	png_image png = { .version = PNG_IMAGE_VERSION };
	png_color black = { 0, 0, 0 };

	if (!png_image_begin_read_from_memory(&png, data, len)) {
		*ret_error = g_strdup_printf("bad PNG: %s", png.message);
		png_image_free(&png);
		return -EINVAL;
	}
	if (png.width == 0 || png.height == 0 || png.width > V4L2CUSE_MAX_WIDTH ||
	    png.height > V4L2CUSE_MAX_HEIGHT) {
		*ret_error = g_strdup_printf("PNG of %ux%u is outside 1x1..%ux%u", png.width,
					     png.height, V4L2CUSE_MAX_WIDTH, V4L2CUSE_MAX_HEIGHT);
		png_image_free(&png);
		return -EINVAL;
	}
	png.format = PNG_FORMAT_RGB;
	im->width = png.width;
	im->height = png.height;
	im->rgb = g_malloc(PNG_IMAGE_SIZE(png));
	if (!png_image_finish_read(&png, &black, im->rgb, 0, NULL)) {
		*ret_error = g_strdup_printf("bad PNG: %s", png.message);
		png_image_free(&png);
		return -EINVAL;
	}
	return 0;
}

static int
image_load_jpeg(struct image_reader *im, const uint8_t *data, size_t len, char **ret_error)
{
	struct v4l2cuse_convert *cv = v4l2cuse_convert_new();
	struct v4l2cuse_image in = {
		.fourcc = V4L2_PIX_FMT_JPEG, .width = 1, .height = 1, .data = data, .size = len,
	};
	const uint8_t *rgb;
	int r;

	v4l2cuse_convert_set_strict_jpeg(cv, true);
	r = v4l2cuse_convert_to_rgb24(cv, &in, &rgb, &im->width, &im->height);
	if (r == 0)
		im->rgb = g_memdup2(rgb, (size_t)im->width * im->height * 3);
	else
		*ret_error = g_strdup("corrupt JPEG");
	v4l2cuse_convert_free(cv);
	return r;
}

int
v4l2cuse_image_reader_open(FILE *f, struct v4l2cuse_file_reader **ret, char **ret_error)
{
	static const uint8_t png_sig[8] = { 0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n' };
	struct image_reader *im = g_new0(struct image_reader, 1);
	uint8_t *data = NULL;
	size_t len = 0;
	bool png;
	int r;

	im->base.ops = &image_ops;
	r = image_slurp(f, &data, &len, ret_error);
	fclose(f);
	if (r < 0)
		goto err;
	png = len >= 8 && memcmp(data, png_sig, 8) == 0;
	if (png)
		r = image_load_png(im, data, len, ret_error);
	else if (len >= 3 && data[0] == 0xff && data[1] == 0xd8 && data[2] == 0xff)
		r = image_load_jpeg(im, data, len, ret_error);
	else {
		*ret_error = g_strdup("not a PNG or JPEG image");
		r = -EINVAL;
	}
	if (r < 0)
		goto err;
	im->base.info = (struct v4l2cuse_file_reader_info){
		.width = im->width, .height = im->height,
		.fourcc = V4L2_PIX_FMT_RGB24,
		.still = true,
		.can_reopen = true,
	};
	g_strlcpy(im->base.info.kind, png ? "PNG" : "JPEG", sizeof(im->base.info.kind));
	g_free(data);
	*ret = &im->base;
	return 0;

err:
	g_free(data);
	image_destroy(&im->base);
	return r;
}
