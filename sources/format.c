/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Pixel format facts: the one table of every format the project reads or
 * produces (descriptions, planes, bits per pixel, subsampling), the frame
 * layout math and the colorimetry policy (see include/v4l2cuse/format.h).
 *
 * The descriptions are the ones v4l2-compliance 1.22.1 compares ENUM_FMT
 * against (utils/common/v4l2-pix-formats.h of that release, generated from
 * the kernel's v4l_fill_fmtdesc()); a mismatch is a hard failure there.
 */

#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#include "util/macros.h"
#include "v4l2cuse/format.h"

/*
 * Order: Y'CbCr (packed 4:2:2, 4:2:0, then the read-only 4:2:2 and 4:4:4
 * planar ones), RGB, grey, compressed. The output formats keep the order
 * consumers have always been offered.
 */
static const struct v4l2cuse_format_info fmt_table[] = {
	{
		.fourcc = V4L2_PIX_FMT_YUYV, .description = "YUYV 4:2:2", .output = true,
		.yuv = true, .n_planes = 1, .bpp = { 16 },
		.hdiv = 2, .vdiv = 1, .width_align = 2,
	}, {
		.fourcc = V4L2_PIX_FMT_UYVY, .description = "UYVY 4:2:2", .output = true,
		.yuv = true, .n_planes = 1, .bpp = { 16 },
		.hdiv = 2, .vdiv = 1, .width_align = 2,
	}, {
		.fourcc = V4L2_PIX_FMT_YVYU, .description = "YVYU 4:2:2", .output = true,
		.yuv = true, .n_planes = 1, .bpp = { 16 },
		.hdiv = 2, .vdiv = 1, .width_align = 2,
	}, {
		.fourcc = V4L2_PIX_FMT_NV12, .description = "Y/CbCr 4:2:0", .output = true,
		.yuv = true, .n_planes = 2, .bpp = { 8, 8 },
		.hdiv = 2, .vdiv = 2, .width_align = 2,
	}, {
		.fourcc = V4L2_PIX_FMT_NV21, .description = "Y/CrCb 4:2:0", .output = true,
		.yuv = true, .n_planes = 2, .bpp = { 8, 8 },
		.hdiv = 2, .vdiv = 2, .width_align = 2,
	}, {
		.fourcc = V4L2_PIX_FMT_YUV420, .description = "Planar YUV 4:2:0", .output = true,
		.yuv = true, .n_planes = 3, .bpp = { 8, 4, 4 },
		.hdiv = 2, .vdiv = 2, .width_align = 2,
	}, {
		.fourcc = V4L2_PIX_FMT_YVU420, .description = "Planar YVU 4:2:0", .output = true,
		.yuv = true, .n_planes = 3, .bpp = { 8, 4, 4 },
		.hdiv = 2, .vdiv = 2, .width_align = 2,
	}, {
		.fourcc = V4L2_PIX_FMT_NV16,
		.yuv = true, .n_planes = 2, .bpp = { 8, 8 },
		.hdiv = 2, .vdiv = 1, .width_align = 2,
	}, {
		.fourcc = V4L2_PIX_FMT_NV61,
		.yuv = true, .n_planes = 2, .bpp = { 8, 8 },
		.hdiv = 2, .vdiv = 1, .width_align = 2,
	}, {
		.fourcc = V4L2_PIX_FMT_YUV422P,
		.yuv = true, .n_planes = 3, .bpp = { 8, 4, 4 },
		.hdiv = 2, .vdiv = 1, .width_align = 2,
	}, {
		.fourcc = V4L2CUSE_PIX_FMT_YUV444P,
		.yuv = true, .n_planes = 3, .bpp = { 8, 8, 8 },
		.hdiv = 1, .vdiv = 1, .width_align = 1,
	}, {
		.fourcc = V4L2_PIX_FMT_RGB24, .description = "24-bit RGB 8-8-8", .output = true,
		.n_planes = 1, .bpp = { 24 }, .hdiv = 1, .vdiv = 1, .width_align = 1,
	}, {
		.fourcc = V4L2_PIX_FMT_BGR24, .description = "24-bit BGR 8-8-8", .output = true,
		.n_planes = 1, .bpp = { 24 }, .hdiv = 1, .vdiv = 1, .width_align = 1,
	}, {
		.fourcc = V4L2_PIX_FMT_XRGB32, .description = "32-bit XRGB 8-8-8-8", .output = true,
		.n_planes = 1, .bpp = { 32 }, .hdiv = 1, .vdiv = 1, .width_align = 1,
	}, {
		.fourcc = V4L2_PIX_FMT_XBGR32, .description = "32-bit BGRX 8-8-8-8", .output = true,
		.n_planes = 1, .bpp = { 32 }, .hdiv = 1, .vdiv = 1, .width_align = 1,
	}, {
		.fourcc = V4L2_PIX_FMT_RGB565, .description = "16-bit RGB 5-6-5", .output = true,
		.n_planes = 1, .bpp = { 16 }, .hdiv = 1, .vdiv = 1, .width_align = 1,
	}, {
		.fourcc = V4L2_PIX_FMT_GREY, .description = "8-bit Greyscale", .output = true,
		.n_planes = 1, .bpp = { 8 }, .hdiv = 1, .vdiv = 1, .width_align = 1,
	}, {
		.fourcc = V4L2_PIX_FMT_MJPEG, .description = "Motion-JPEG", .output = true,
		.compressed = true, .n_planes = 1, .bpp = { 0 },
		.hdiv = 2, .vdiv = 1, .width_align = 2,
	}, {
		.fourcc = V4L2_PIX_FMT_JPEG,
		.compressed = true, .n_planes = 1, .bpp = { 0 },
		.hdiv = 2, .vdiv = 1, .width_align = 2,
	},
};

/* Passed through, never converted (format.h): not in the table above. */
static const struct v4l2cuse_format_info passthrough_table[] = {
	{
		.fourcc = V4L2_PIX_FMT_H264, .description = "H.264",
		.compressed = true, .yuv = true, .n_planes = 1, .bpp = { 0 },
		.hdiv = 2, .vdiv = 2, .width_align = 2,
	}, {
		.fourcc = V4L2_PIX_FMT_HEVC, .description = "HEVC",
		.compressed = true, .yuv = true, .n_planes = 1, .bpp = { 0 },
		.hdiv = 2, .vdiv = 2, .width_align = 2,
	},
};

/* The entry of @fourcc in @table of @n entries, or NULL. */
static const struct v4l2cuse_format_info *
table_find(const struct v4l2cuse_format_info *table, size_t n, uint32_t fourcc)
{
	for (size_t i = 0; i < n; i++) {
		if (table[i].fourcc == fourcc)
			return &table[i];
	}
	return NULL;
}

const struct v4l2cuse_format_info *
v4l2cuse_format_passthrough(uint32_t fourcc)
{
	return table_find(passthrough_table, ARRAY_SIZE(passthrough_table), fourcc);
}

const struct v4l2cuse_format_info *
v4l2cuse_format_offered(uint32_t fourcc)
{
	const struct v4l2cuse_format_info *info = v4l2cuse_format_info(fourcc);

	return info ? info : v4l2cuse_format_passthrough(fourcc);
}

const struct v4l2cuse_format_info *
v4l2cuse_format_lookup(uint32_t fourcc)
{
	return table_find(fmt_table, ARRAY_SIZE(fmt_table), fourcc);
}

const struct v4l2cuse_format_info *
v4l2cuse_format_lookup_by_index(unsigned int index)
{
	return index < ARRAY_SIZE(fmt_table) ? &fmt_table[index] : NULL;
}

const struct v4l2cuse_format_info *
v4l2cuse_format_info(uint32_t fourcc)
{
	const struct v4l2cuse_format_info *info = v4l2cuse_format_lookup(fourcc);

	return info && info->output ? info : NULL;
}

const struct v4l2cuse_format_info *
v4l2cuse_format_by_index(unsigned int index)
{
	for (size_t i = 0; i < ARRAY_SIZE(fmt_table); i++) {
		if (fmt_table[i].output && index-- == 0)
			return &fmt_table[i];
	}
	return NULL;
}

bool
v4l2cuse_format_in_set(const struct v4l2cuse_format_info *info, enum v4l2cuse_format_set set)
{
	return info && (set == V4L2CUSE_FORMATS_OUTPUT ? info->output : !info->compressed);
}

size_t
v4l2cuse_format_frame_size(const struct v4l2cuse_format_info *info, uint32_t width,
			   uint32_t height, uint32_t bytesperline, size_t ret_off[3],
			   size_t ret_stride[3])
{
	uint64_t natural, total = 0;

	if (!info || info->compressed || width == 0 || height == 0 ||
	    width > V4L2CUSE_MAX_WIDTH || height > V4L2CUSE_MAX_HEIGHT ||
	    width % info->hdiv || (info->n_planes > 1 && height % info->vdiv))
		return 0;
	natural = (uint64_t)width * info->bpp[0] / 8;
	if (bytesperline == 0)
		bytesperline = (uint32_t)natural;
	if (bytesperline < natural)
		return 0;
	for (unsigned int i = 0; i < info->n_planes; i++) {
		uint64_t stride = (uint64_t)bytesperline * info->bpp[i] / info->bpp[0];

		if (ret_off)
			ret_off[i] = (size_t)total;
		if (ret_stride)
			ret_stride[i] = (size_t)stride;
		total += stride * (i ? height / info->vdiv : height);
	}
	return total > SIZE_MAX / 2 ? 0 : (size_t)total;
}

void
v4l2cuse_format_colorimetry(struct v4l2_pix_format *pix)
{
	const struct v4l2cuse_format_info *info = v4l2cuse_format_lookup(pix->pixelformat);

	if (info && info->compressed) {
		pix->colorspace = V4L2_COLORSPACE_JPEG;
		pix->ycbcr_enc = V4L2_YCBCR_ENC_601;
		pix->quantization = V4L2_QUANTIZATION_FULL_RANGE;
		pix->xfer_func = V4L2_XFER_FUNC_SRGB;
	} else if (info && info->yuv && pix->height >= 720) {
		pix->colorspace = V4L2_COLORSPACE_REC709;
		pix->ycbcr_enc = V4L2_YCBCR_ENC_709;
		pix->quantization = V4L2_QUANTIZATION_LIM_RANGE;
		pix->xfer_func = V4L2_XFER_FUNC_709;
	} else if (info && info->yuv) {
		pix->colorspace = V4L2_COLORSPACE_SMPTE170M;
		pix->ycbcr_enc = V4L2_YCBCR_ENC_601;
		pix->quantization = V4L2_QUANTIZATION_LIM_RANGE;
		pix->xfer_func = V4L2_XFER_FUNC_709;
	} else {
		pix->colorspace = V4L2_COLORSPACE_SRGB;
		pix->ycbcr_enc = V4L2_YCBCR_ENC_601;
		pix->quantization = V4L2_QUANTIZATION_FULL_RANGE;
		pix->xfer_func = V4L2_XFER_FUNC_SRGB;
	}
}

static uint32_t
fmt_round_up(uint32_t v, uint32_t align)
{
	return align > 1 ? (v + align - 1) / align * align : v;
}

int
v4l2cuse_format_fill(struct v4l2_pix_format *pix)
{
	const struct v4l2cuse_format_info *info = v4l2cuse_format_offered(pix->pixelformat);
	uint64_t width, height, bpl, size;

	if (!info || pix->width == 0 || pix->height == 0)
		return -EINVAL;
	if (pix->width > V4L2CUSE_MAX_WIDTH || pix->height > V4L2CUSE_MAX_HEIGHT)
		return -EOVERFLOW;

	width = fmt_round_up(pix->width, info->width_align);
	height = info->n_planes > 1 ? fmt_round_up(pix->height, info->vdiv) : pix->height;

	if (info->compressed) {
		bpl = 0;
		size = width * height * 2 + V4L2CUSE_JPEG_HEADROOM;
	} else {
		size_t stride[3];

		/* Rounded to the subsampling, so the layout exists. */
		size = v4l2cuse_format_frame_size(info, (uint32_t)width, (uint32_t)height, 0,
						  NULL, stride);
		bpl = size ? stride[0] : 0;
	}
	if (size == 0 || size > UINT32_MAX)
		return -EOVERFLOW;
	pix->width = (uint32_t)width;
	pix->height = (uint32_t)height;
	pix->bytesperline = (uint32_t)bpl;
	pix->sizeimage = (uint32_t)size;
	pix->field = V4L2_FIELD_NONE;
	pix->priv = V4L2_PIX_FMT_PRIV_MAGIC;
	pix->flags = 0;
	v4l2cuse_format_colorimetry(pix);
	return 0;
}
