; domains.blocksworld.generator: blocks=5, seed=10, split=val
(define (problem blocksworld-n5-s10-val)
  (:domain blocksworld-4ops)
  (:objects b1 b2 b3 b4 b5)
  (:init
    (arm-empty)
    (on b1 b3)
    (on-table b2)
    (on-table b3)
    (on b4 b1)
    (on b5 b4)
    (clear b2)
    (clear b5)
  )
  (:goal (and
    (on b5 b1)
  ))
)
