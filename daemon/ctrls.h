/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <linux/videodev2.h>

struct v4l2cuse_device;
struct v4l2cuse_fh;

int dev_queryctrl(struct v4l2cuse_device *dev, struct v4l2_queryctrl *q);
int dev_query_ext_ctrl(struct v4l2cuse_device *dev, struct v4l2_query_ext_ctrl *q);
int dev_querymenu(struct v4l2cuse_device *dev, struct v4l2_querymenu *m);
int dev_g_ctrl(struct v4l2cuse_fh *fh, struct v4l2_control *ctl);
int dev_s_ctrl(struct v4l2cuse_fh *fh, struct v4l2_control *ctl);
int dev_ext_ctrls(struct v4l2cuse_fh *fh, unsigned int cmd, struct v4l2_ext_controls *cs,
		  struct v4l2_ext_control *ctrls);
int dev_ctrl_subscribe(struct v4l2cuse_fh *fh, const struct v4l2_event_subscription *sub);
