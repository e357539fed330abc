/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <glib.h>

#include "fake-req.h"
#include "fake-consumer.h"

struct v4l2cuse_fh *
fake_open(struct v4l2cuse_device *dev, bool shim, int flags)
{
	int r = 0;
	struct v4l2cuse_fh *fh = v4l2cuse_fh_open(dev, flags, 7, 0, &r);

	g_assert_cmpint(r, ==, 0);
	g_assert_nonnull(fh);
	v4l2cuse_fh_set_streaming(fh, shim);
	return fh;
}

int
fake_consumer_qbuf(struct fake_consumer *c, uint32_t index)
{
	struct v4l2_buffer b = { .index = index, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
				 .memory = V4L2_MEMORY_MMAP };

	return fake_ioctl(c->fh, VIDIOC_QBUF, &b);
}

void
fake_consumer_start(struct fake_consumer *c, struct v4l2cuse_device *dev, unsigned int n,
		    int flags)
{
	struct v4l2_requestbuffers rb = { .count = n, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					  .memory = V4L2_MEMORY_MMAP };
	int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;

	memset(c, 0, sizeof(*c));
	c->last_seq = UINT32_MAX;
	c->fh = fake_open(dev, true, flags ? flags : O_RDWR | O_NONBLOCK);
	g_assert_cmpint(fake_ioctl(c->fh, VIDIOC_REQBUFS, &rb), ==, 0);
	g_assert_cmpuint(rb.count, ==, n);
	c->n_bufs = rb.count;
	for (uint32_t i = 0; i < c->n_bufs; i++) {
		struct v4l2_buffer b = { .index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
					 .memory = V4L2_MEMORY_MMAP };
		unsigned int index;
		int fd;

		g_assert_cmpint(fake_ioctl(c->fh, VIDIOC_QUERYBUF, &b), ==, 0);
		g_assert_cmpint(vb_queue_mmap_fd(v4l2cuse_fh_queue(c->fh), b.m.offset, b.length,
						 &fd, &index), ==, 0);
		g_assert_cmpuint(index, ==, i);
		c->mem[i] = mmap(NULL, b.length, PROT_READ, MAP_SHARED, fd, 0);
		g_assert_true(c->mem[i] != MAP_FAILED);
		c->len[i] = b.length;
		close(fd);
		g_assert_cmpint(fake_consumer_qbuf(c, i), ==, 0);
	}
	g_assert_cmpint(fake_ioctl(c->fh, VIDIOC_STREAMON, &type), ==, 0);
}

int
fake_consumer_dqbuf(struct fake_consumer *c, uint32_t sizeimage, struct v4l2_buffer *ret)
{
	struct v4l2_buffer b = { .type = V4L2_BUF_TYPE_VIDEO_CAPTURE,
				 .memory = V4L2_MEMORY_MMAP };
	int r = fake_ioctl(c->fh, VIDIOC_DQBUF, &b);

	if (r < 0)
		return r;
	g_assert_cmpint(r, ==, 0);
	g_assert_cmpuint(b.bytesused, ==, sizeimage);
	g_assert_false(b.flags & V4L2_BUF_FLAG_ERROR);
	if (c->last_seq == UINT32_MAX)
		g_assert_cmpuint(b.sequence, ==, 0);	/* each queue counts from 0 */
	else if (b.sequence != c->last_seq + 1)
		c->gaps++;
	c->last_seq = b.sequence;
	c->frames++;
	*ret = b;
	return 0;
}

void
fake_consumer_unmap(struct fake_consumer *c)
{
	for (unsigned int i = 0; i < c->n_bufs; i++)
		munmap(c->mem[i], c->len[i]);
	c->n_bufs = 0;
}

void
fake_consumer_close(struct fake_consumer *c)
{
	fake_consumer_unmap(c);
	v4l2cuse_fh_release(c->fh);
	c->fh = NULL;
}
