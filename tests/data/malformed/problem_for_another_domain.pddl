; A gripper problem loaded against the ferry domain.
(define (problem gripper-tiny)
  (:domain gripper)
  (:objects rooma roomb ball1 left)
  (:init (room rooma) (room roomb) (ball ball1) (gripper left)
         (at-robby rooma) (at ball1 rooma) (free left))
  (:goal (and (at ball1 roomb))))
