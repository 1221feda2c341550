; domains.blocksworld.generator: blocks=5, seed=3, split=val
(define (problem blocksworld-n5-s3-val)
  (:domain blocksworld-4ops)
  (:objects b1 b2 b3 b4 b5)
  (:init
    (arm-empty)
    (on b1 b5)
    (on b2 b1)
    (on b3 b4)
    (on-table b4)
    (on-table b5)
    (clear b2)
    (clear b3)
  )
  (:goal (and
    (on b4 b3)
  ))
)
